import type { NamespaceState } from "./namespace-state.js";
import type { LockRequestState } from "./lock-request-state.js";
import type { PendingLock } from "./pending-lock.js";
import { REPLICATION_FORMAT, type NamespaceImage, type TokenImageAt } from "./replication-entries.js";
import { tokenImage, waiterImage } from "./replication-emit.js";

/**
 * The whole table of a namespace at `now` as plain JSON (see `LockEngine.exportNamespace`): every
 * live token with its holds and fencing tokens, every waiter with its partial holds, deadline and
 * queue place, each descriptor's queue order, and the counter. One walk of the namespace.
 */
export function exportNamespace(ns: NamespaceState, now: number): NamespaceImage {
  const tokens: TokenImageAt[] = [];
  for (const req of ns.tokens.values()) tokens.push({ ...tokenImage(req), heldMs: Math.max(0, Math.floor(now - req.grantedAt)) });
  const waiting: LockRequestState[] = [...ns.waiting].sort((a, b) => (a.pending?.waitSerial ?? 0) - (b.pending?.waitSerial ?? 0));
  const queues: { descriptor: string; serials: number[] }[] = [];
  for (const d of ns.descriptors.values()) {
    if (d.queueHead === null) continue;
    const serials: number[] = [];
    for (let q: PendingLock | null = d.queueHead; q !== null; q = q.queueNext) serials.push(q.waitSerial);
    queues.push({ descriptor: d.key, serials });
  }
  return { format: REPLICATION_FORMAT, namespace: ns.name, next: ns.nextValue, tokens, waiters: waiting.map((req) => waiterImage(req, now)), queues };
}

/** The image of a namespace the table has never used: nothing held, the counter where it would start. */
export function emptyImage(namespace: string, next: number): NamespaceImage {
  return { format: REPLICATION_FORMAT, namespace, next, tokens: [], waiters: [], queues: [] };
}
