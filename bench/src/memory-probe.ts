/**
 * Child-process probe for `memory_bytes_per_held_lock`: holds N single-descriptor exclusive locks
 * in a fresh engine and prints the heap growth per lock as JSON. Run with `--expose-gc` so the
 * measurement is taken after full collections.
 */
import { LockEngine } from "@leasehold/server";

const count = Number(process.argv[2] ?? 1_000_000);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with --expose-gc");
const engine = new LockEngine({ leaseMs: 3_600_000 });
// Create the namespace and warm the code paths before the baseline.
const warm = engine.lock("mem", { locks: [{ descriptor: "warm", mode: "exclusive" }] });
if (warm.status === "acquired") engine.unlock("mem", { tokens: [warm.token] });
/** Exclusive lock+unlock pairs per second on keys of their own, in `target`: best of three rounds. */
function pairsPerSecond(target: LockEngine): number {
  let best = 0;
  for (let round = 0; round < 3; round++) {
    const start = performance.now();
    for (let i = 0; i < 200_000; i++) {
      const res = target.lock("mem", { locks: [{ descriptor: `other-${i & 1023}`, mode: "exclusive" }] });
      if (res.status !== "acquired") throw new Error("lock not granted");
      target.unlock("mem", { tokens: [res.token] });
    }
    best = Math.max(best, 200_000 / ((performance.now() - start) / 1000));
  }
  return best;
}
gc();
gc();
const before = process.memoryUsage().heapUsed;
const tenth = Math.floor(count / 10);
let rateAtTenth = 0;
for (let i = 0; i < count; i++) {
  // Grant and release must not slow down with the size of the table: measure at a tenth and at
  // the full count, same process, same keys. (Taken before the memory figure's final GC; the
  // probe's own locks are released, so they do not count in it.)
  if (i === tenth) rateAtTenth = pairsPerSecond(engine);
  const res = engine.lock("mem", { locks: [{ descriptor: `orders\u0000${i.toString().padStart(8, "0")}`, mode: "exclusive" }] });
  if (res.status !== "acquired") throw new Error("lock not granted");
}
const rateAtFull = pairsPerSecond(engine);
gc();
gc();
const after = process.memoryUsage().heapUsed;
const held = engine.metrics().heldLocks;
if (held !== count) throw new Error(`expected ${count} held locks, engine reports ${held}`);

process.stdout.write(JSON.stringify({ count, bytesPerLock: (after - before) / count, heapBytes: after, rateAtTenth, rateAtFull }) + "\n");
