import type { DescriptorSnapshot, LockTableSnapshot } from "./engine-snapshots.js";
import type { DescriptorState } from "./descriptor-state.js";
import { PERMIT, modeName } from "./lock-mode-codes.js";
import type { LockRequestState } from "./lock-request-state.js";
import type { NamespaceState } from "./namespace-state.js";

type Holder = { readonly mode: DescriptorSnapshot["holders"][number]["mode"]; readonly fencingToken: number };

/**
 * A deterministic, token-free picture of a namespace. Holders are not indexed per descriptor (the
 * fast path only counts them), so they are gathered from the tokens and the waiting requests'
 * partial holds: O(everything held), which is fine for a diagnostic and keeps grants cheap.
 */
export function snapshotNamespace(ns: NamespaceState): LockTableSnapshot {
  const holders = new Map<DescriptorState, Holder[]>();
  const collect = (req: LockRequestState): void => {
    for (let i = 0; i < req.heldCount; i++) {
      const d = req.heldAt(i);
      let list = holders.get(d);
      if (list === undefined) holders.set(d, (list = []));
      list.push({ mode: modeName(d.holderMode), fencingToken: req.fencingAt(i) });
    }
  };
  for (const req of ns.tokens.values()) collect(req);
  for (const req of ns.waiting) collect(req);

  const descriptors: DescriptorSnapshot[] = [];
  for (const d of ns.descriptors.values()) {
    if (d.holderCount === 0 && d.queueHead === null) continue;
    const queue: { mode: DescriptorSnapshot["queue"][number]["mode"] }[] = [];
    for (let q = d.queueHead; q !== null; q = q.queueNext) queue.push({ mode: modeName(q.queueMode) });
    const held = (holders.get(d) ?? []).sort((a, b) => a.fencingToken - b.fencingToken);
    const isPermit = d.holderMode === PERMIT || held.some((h) => h.mode === "permit") || queue.some((q) => q.mode === "permit");
    descriptors.push(isPermit ? { descriptor: d.key, limit: d.limit, holders: held, queue } : { descriptor: d.key, holders: held, queue });
  }
  descriptors.sort((a, b) => (a.descriptor < b.descriptor ? -1 : a.descriptor > b.descriptor ? 1 : 0));
  return {
    descriptors,
    heldTokens: ns.tokens.size,
    waitingRequests: ns.waiting.size,
    immutableLocks: ns.liveImmutables(),
    nextTimestamp: ns.nextValue,
  };
}
