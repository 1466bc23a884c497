import type { LockSpec } from "@leasehold/protocol";
import { PERMIT, modeName } from "./lock-mode-codes.js";
import type { LockRequestState } from "./lock-request-state.js";
import type { PendingLock } from "./pending-lock.js";
import type { GrantEntry, LockTokenImage, ReplicatedHold, TokenImage, WaiterEntry, WaiterImage } from "./replication-entries.js";

// Builders of replication entries and image parts from the engine's state (the leader's side).
// Only called when a sink is set or an image is taken, so the fast path never allocates them.

const ms = (duration: number): number => Math.max(0, Math.floor(duration));

/** Plain copies of specs (the entry may outlive the request and travel as JSON). */
export function copySpecs(specs: readonly LockSpec[]): LockSpec[] {
  return specs.map((s) => (s.limit === undefined ? { descriptor: s.descriptor, mode: s.mode } : { descriptor: s.descriptor, mode: s.mode, limit: s.limit }));
}

/** What `req` holds, in ascending descriptor order, with each permit descriptor's live limit. */
export function holdsOf(req: LockRequestState): ReplicatedHold[] {
  const out = new Array<ReplicatedHold>(req.heldCount);
  for (let i = 0; i < req.heldCount; i++) {
    const d = req.heldAt(i);
    const mode = modeName(d.holderMode);
    out[i] = d.holderMode === PERMIT ? { descriptor: d.key, mode, fencingToken: req.fencingAt(i), limit: d.limit } : { descriptor: d.key, mode, fencingToken: req.fencingAt(i) };
  }
  return out;
}

/** A live token as an image part (no times). */
export function tokenImage(req: LockRequestState): TokenImage {
  if (req.leaseName !== undefined) {
    const lease = { kind: "timestamp-lease" as const, token: req.token, name: req.leaseName, leased: req.leased, count: req.max };
    return req.requestId === undefined ? lease : { ...lease, requestId: req.requestId };
  }
  if (req.startTimestamp !== 0) return { kind: "immutable", token: req.token, startTimestamp: req.startTimestamp };
  const lock: { -readonly [K in keyof LockTokenImage]: LockTokenImage[K] } = {
    kind: "lock",
    token: req.token,
    holds: holdsOf(req),
    allOrNone: req.allOrNone,
    max: req.max,
    waitedMs: ms(req.grantedAt - req.arrivedAt),
  };
  if (req.requestId !== undefined && req.specs !== null) {
    lock.requestId = req.requestId;
    lock.specs = copySpecs(req.specs);
  }
  if (req.clientDescription !== undefined) lock.clientDescription = req.clientDescription;
  return lock;
}

/** The grant entry of a token just granted; `waiter` is the handle it waited with, if it did. */
export function grantEntry(req: LockRequestState, waiter: PendingLock | null): GrantEntry {
  const entry = { type: "grant" as const, ...tokenImage(req), next: req.namespace.nextValue } as GrantEntry & { waiter?: number | undefined };
  if (waiter !== null) entry.waiter = waiter.waitSerial;
  return entry;
}

/** A waiting request's whole state at `now`. */
export function waiterImage(req: LockRequestState, now: number): WaiterImage {
  const pending = req.pending as PendingLock;
  const out: Record<string, unknown> = {
    serial: pending.waitSerial,
    specs: copySpecs(req.specs as readonly LockSpec[]),
    allOrNone: req.allOrNone,
    max: req.max,
    waitOnly: req.waitOnly,
    remainingMs: ms(pending.deadline - now),
    waitedMs: ms(now - req.arrivedAt),
    holds: holdsOf(req),
    nextIndex: req.nextIndex,
    watching: pending.watching,
  };
  if (req.requestId !== undefined) out.requestId = req.requestId;
  if (req.clientDescription !== undefined) out.clientDescription = req.clientDescription;
  const d = pending.queuedOn;
  if (d !== null) {
    const mode = modeName(pending.queueMode);
    out.queuedOn = pending.queueMode === PERMIT ? { descriptor: d.key, mode, limit: d.limit } : { descriptor: d.key, mode };
  }
  return out as unknown as WaiterImage;
}

/** The entry of a request that started waiting or changed while waiting. */
export function waiterEntry(req: LockRequestState, now: number): WaiterEntry {
  return { type: "waiting", ...waiterImage(req, now), next: req.namespace.nextValue };
}
