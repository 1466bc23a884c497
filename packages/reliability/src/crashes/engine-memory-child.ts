/**
 * Child process of the 10,000-waiter scenario, run with `node --expose-gc`: the lock service alone
 * (`createLockService`, no HTTP), one holder and `count` waiting lock requests on its descriptor,
 * and the V8 heap used after a full GC before and with them. Separates the lock table's cost per
 * waiter from the connection's, which the server process's RSS cannot.
 *
 * Usage: node --expose-gc engine-memory-child.js <count>. Prints one line:
 * `{"event":"engine-memory","heapBefore":…,"heapWaiting":…,"count":…}`.
 */
import { createLockService } from "@leasehold/server";

const count = Number(process.argv[2] ?? "10000");
const collect = (globalThis as { gc?: () => void }).gc;

function heapAfterGc(): number {
  if (collect === undefined) throw new Error("run with node --expose-gc");
  collect();
  collect();
  return process.memoryUsage().heapUsed;
}

async function main(): Promise<void> {
  const service = createLockService({});
  const held = await service.lock("memory", { locks: [{ descriptor: "d", mode: "exclusive" }] });
  if (held.status !== "acquired") throw new Error("the holder could not lock");
  const heapBefore = heapAfterGc();
  const waiting: Promise<unknown>[] = [];
  for (let i = 0; i < count; i++) {
    waiting.push(service.lock("memory", { requestId: `w-${i}`, locks: [{ descriptor: "d", mode: "exclusive" }], acquireTimeoutMs: 60_000 }));
  }
  const heapWaiting = heapAfterGc();
  const metrics = service.metrics();
  process.stdout.write(`${JSON.stringify({ event: "engine-memory", heapBefore, heapWaiting, count, waitingRequests: metrics.waitingRequests })}\n`, () =>
    process.exit(0),
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`engine-memory-child: ${String(err)}\n`);
  process.exit(1);
});
