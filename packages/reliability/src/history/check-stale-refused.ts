import { byDescriptor, ms, ViolationLog, type CheckResult } from "./check-result.js";
import type { History, ResourceOperation } from "./history-types.js";

function describe(op: ResourceOperation, highest: ResourceOperation | undefined): string {
  const what = `${op.descriptor}: ${op.kind} #${op.seq} by ${op.mode} holder ${op.holder} with token ${op.fencingToken} at ${ms(op.at)}`;
  if (highest === undefined || op.fencingToken >= highest.fencingToken) {
    return `${what} was refused, though no higher token had reached the resource`;
  }
  return `${what} was accepted after the resource had seen token ${highest.fencingToken} (${highest.kind} #${highest.seq} by ${highest.holder})`;
}

/**
 * Rule (c): every operation of a stale holder was refused, and only those.
 *
 * Per resource (descriptor), operations are replayed in the order the resource received them
 * (`seq`), keeping the highest fencing token among all operations before: an operation whose token
 * is below it is stale (its holder was granted the lock before a newer holder that has already
 * used the resource) and must have been refused; any other operation must have been accepted. The
 * second half keeps the first honest: a resource that refused everything would otherwise pass
 * (and, never acknowledging a write, pass rule (d) too). One violation per misjudged operation.
 */
export function checkStaleRefused(history: History): CheckResult {
  const log = new ViolationLog();
  for (const ops of byDescriptor(history.operations).values()) {
    let highest: ResourceOperation | undefined;
    for (const op of [...ops].sort((x, y) => x.seq - y.seq)) {
      const stale = highest !== undefined && op.fencingToken < highest.fencingToken;
      if (stale === op.accepted) {
        const seen = highest;
        log.add(() => describe(op, seen));
      }
      if (highest === undefined || op.fencingToken > highest.fencingToken) highest = op;
    }
  }
  return log.result("(c) stale holders' operations refused", history.operations.length);
}
