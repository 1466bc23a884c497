import { groupBy, heldUntil, type Immutable, type Txn, type Violation } from "./sim-records.js";

/**
 * The immutable timestamp is never above a live transaction's start (PROTOCOL.md
 * "transactions/start", "immutable-timestamp", "Leases across failover"): an answer is checked
 * against every transaction whose grant was received before it was asked for and which was held
 * (not unlocked, within its guarantee) until it arrived; and a `transactions/start` answer's
 * immutable timestamp is at most each start timestamp it gives.
 */
export function immutableTimestamps(immutables: readonly Immutable[], txns: readonly Txn[]): Violation[] {
  const out: Violation[] = [];
  const byNs = groupBy(txns, (t) => t.namespace);
  for (const i of immutables) {
    const above = i.starts.find((s) => s < i.value);
    if (above !== undefined) {
      out.push({ invariant: "immutable-timestamp", detail: `${i.namespace}: ${i.client}'s transactions/start answered at ${i.receivedAt.toFixed(1)} gave immutable timestamp ${i.value} above its own start timestamp ${above}` });
    }
    const live = (byNs.get(i.namespace) ?? []).find((t) => t.receivedAt < i.sentAt && heldUntil(t) > i.receivedAt && t.start < i.value);
    if (live !== undefined) {
      out.push({
        invariant: "immutable-timestamp",
        detail: `${i.namespace}: immutable timestamp ${i.value} answered to ${i.client} at ${i.receivedAt.toFixed(1)} (asked at ${i.sentAt.toFixed(1)}) is above the start ${live.start} of ${live.client}'s transaction (leader ${live.leaderId}), held from ${live.receivedAt.toFixed(1)} to ${heldUntil(live).toFixed(1)}`,
      });
    }
  }
  return out;
}
