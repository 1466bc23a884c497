import type { Coordinator } from "./coordinator.js";
import type { ShardTerm } from "./shard-term.js";

/**
 * Record, in one coordinator statement, the immutable timestamps that changed since last recorded
 * in every live term of `terms`, and note in each term what was stored. Rejects when the statement
 * fails (the next round tries again).
 */
export async function recordImmutables(terms: readonly (ShardTerm | null)[], coordinator: Coordinator): Promise<void> {
  const work = terms.filter((t): t is ShardTerm => t !== null).map((t) => ({ term: t, records: t.immutableRecords() }));
  const records = work.flatMap((w) => w.records);
  if (records.length === 0) return;
  const stored = await coordinator.recordImmutable(records);
  for (const w of work) w.term.markRecorded(w.records, stored);
}
