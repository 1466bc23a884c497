import type { NamespaceState } from "./namespace-state.js";
import type { LockRequestState } from "./lock-request-state.js";
import type { PendingLock } from "./pending-lock.js";
import { PERMIT } from "./lock-mode-codes.js";
import { REPLICATION_FORMAT, type NamespaceImage, type TokenImageAt } from "./replication-entries.js";
import { tokenImage, waiterImage } from "./replication-emit.js";

/**
 * The whole table of a namespace at `now` as plain JSON (see `LockEngine.exportNamespace`): every
 * live token with its holds and fencing tokens, every waiter with its partial holds, deadline and
 * queue place, each descriptor's queue order, the counter, and the lock-event log's id, version
 * and watched prefixes. One walk of the namespace.
 */
export function exportNamespace(ns: NamespaceState, now: number, waitSerial: number): NamespaceImage {
  const tokens: TokenImageAt[] = [];
  for (const req of ns.tokens.values()) tokens.push({ ...tokenImage(req), heldMs: Math.max(0, Math.floor(now - req.grantedAt)) });
  const waiting: LockRequestState[] = [...ns.waiting].sort((a, b) => (a.pending?.waitSerial ?? 0) - (b.pending?.waitSerial ?? 0));
  const queues: { descriptor: string; serials: number[] }[] = [];
  // The limits that can still decide something: of descriptors held as permits, and of those a
  // waiter wants as a permit (now or later). Any other descriptor's limit is reset by the next
  // permit request before it matters (a permit request's limit applies on arrival).
  const permits = new Set<string>();
  for (const req of waiting) for (const spec of req.specs ?? []) if (spec.mode === "permit") permits.add(spec.descriptor);
  const limits: { descriptor: string; limit: number }[] = [];
  for (const d of ns.descriptors.values()) {
    if (d.holderMode === PERMIT || permits.has(d.key)) limits.push({ descriptor: d.key, limit: d.limit });
    if (d.queueHead === null) continue;
    const serials: number[] = [];
    for (let q: PendingLock | null = d.queueHead; q !== null; q = q.queueNext) serials.push(q.waitSerial);
    queues.push({ descriptor: d.key, serials });
  }
  // By descriptor, so an image says the same whatever order the descriptors came into use.
  queues.sort((x, y) => (x.descriptor < y.descriptor ? -1 : 1));
  limits.sort((x, y) => (x.descriptor < y.descriptor ? -1 : 1));
  const watch = ns.watchLog?.image(now) ?? ns.carriedWatch?.image(now);
  const image = { format: REPLICATION_FORMAT, namespace: ns.name, next: ns.nextValue, tokens, waiters: waiting.map((req) => waiterImage(req, now)), waitSerial, limits, queues };
  return watch === undefined ? image : { ...image, watch };
}

/** The image of a namespace the table has never used: nothing held, the counter where it would start. */
export function emptyImage(namespace: string, next: number, waitSerial: number): NamespaceImage {
  return { format: REPLICATION_FORMAT, namespace, next, tokens: [], waiters: [], waitSerial, limits: [], queues: [] };
}
