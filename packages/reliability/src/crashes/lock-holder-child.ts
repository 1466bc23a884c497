/**
 * Child process of the client-SIGKILL scenario: a `LockClient.http` that takes an exclusive lock
 * on each given descriptor, says so on stdout, and then only keeps its leases alive (the client's
 * refresher) until it is SIGKILLed. It never unlocks: after the kill only the server's lease can
 * free the descriptors. A lock it loses while alive is reported (`lost`), which the test counts
 * as a violation.
 *
 * Usage: node lock-holder-child.js '<LockHolderConfig JSON>'. Prints {@link LockHolderEvent} lines.
 */
import { LockClient } from "@leasehold/client";
import type { HeldByChild, LockHolderConfig, LockHolderEvent } from "./lock-holder-protocol.js";

const config = JSON.parse(process.argv[2] ?? "{}") as LockHolderConfig;

function emit(event: LockHolderEvent): void {
  process.stdout.write(`${JSON.stringify(event)}\n`);
}

async function main(): Promise<void> {
  const client = LockClient.http({ baseUrl: config.baseUrl, namespace: config.namespace });
  client.lostLocks.subscribe({ next: ({ reason }) => emit({ event: "lost", reason }) });
  const locks: HeldByChild[] = [];
  let validForMs = 0;
  for (const descriptor of config.descriptors) {
    const answer = await client.lock([{ descriptor, mode: "exclusive" }], { acquireTimeoutMs: 5_000 });
    if (answer.status !== "acquired") throw new Error(`could not lock ${descriptor}: ${answer.status}`);
    validForMs = answer.lease.validForMs;
    for (const a of answer.acquired) locks.push({ descriptor: a.descriptor, fencingToken: a.fencingToken });
  }
  emit({ event: "held", locks, validForMs });
  // The refresher's interval keeps the process alive; this makes sure of it, until the SIGKILL.
  setInterval(() => undefined, 60_000);
}

main().catch((err: unknown) => {
  emit({ event: "failed", message: String(err) });
  process.exitCode = 1;
});
