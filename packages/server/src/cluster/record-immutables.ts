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

/**
 * The end of a leadership pass, once the lease rows are read: `record` (the immutable timestamps,
 * {@link recordImmutables}, failures already handled) and `decide` (which shards to take and give
 * up) run side by side, and the pass ends when both have. A decision never waits for the record: a
 * record statement that times out (its answer lost, outcome unknown) would otherwise hold the pass
 * a statement timeout, a third of a leader lease, and an in-sync standby taking over a dead leader
 * has only one leader lease before the other members take the shard empty (found by `pnpm sim`,
 * seed 3599: a lost read and then a lost record answer used up the standby's lease). `record`
 * starts first, so it records the terms led when the rows were read, not those `decide` starts.
 * `recordFirst` (the TEST ONLY break `immutables-before-decide`) waits for the record first.
 */
export async function recordBesideDecide(record: () => Promise<void>, decide: () => Promise<void>, recordFirst = false): Promise<void> {
  if (recordFirst) {
    await record();
    await decide();
    return;
  }
  // allSettled, not all: a decision that fails must not end the pass while the record still runs
  // (the next pass would start a second record beside it).
  const [, decided] = await Promise.allSettled([record(), decide()]);
  if (decided.status === "rejected") throw decided.reason;
}
