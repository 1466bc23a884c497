import { ViolationLog, type CheckResult } from "./check-result.js";
import type { History } from "./history-types.js";

/**
 * Rule (d): no acknowledged write is lost.
 *
 * Every write in the workload is one increment of the resource's counter (read `v`, write `v + 1`
 * under an exclusive lock), so each descriptor's final counter must equal the number of writes the
 * resource accepted (acknowledged) for it. A final counter below that count means acknowledged
 * increments were overwritten (lost); above it, a write was applied that was never acknowledged.
 * A descriptor with a final counter but no operations must end at 0. One violation per
 * increment lost or gained: the sum over descriptors of |final counter − acknowledged increments|.
 */
export function checkNoLostWrites(history: History): CheckResult {
  const log = new ViolationLog();
  const acknowledged = new Map<string, number>();
  for (const d of Object.keys(history.finalCounters)) acknowledged.set(d, 0);
  for (const op of history.operations) {
    if (op.kind === "write" && op.accepted) acknowledged.set(op.descriptor, (acknowledged.get(op.descriptor) ?? 0) + 1);
  }
  for (const [descriptor, acked] of acknowledged) {
    const final = history.finalCounters[descriptor];
    if (final === undefined) {
      log.add(() => `${descriptor}: ${acked} acknowledged increments, but the resource reported no final counter`);
      continue;
    }
    const diff = Math.abs(final - acked);
    log.addMany(diff, () =>
      final < acked
        ? `${descriptor}: final counter ${final} < ${acked} acknowledged increments: ${acked - final} lost`
        : `${descriptor}: final counter ${final} > ${acked} acknowledged increments: ${final - acked} never acknowledged`,
    );
  }
  return log.result("(d) no acknowledged write lost", acknowledged.size);
}
