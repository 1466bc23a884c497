import type { RevokedHolder, RevokeRequest } from "@leasehold/protocol";
import { HELD, WAITING, type LockRequestState } from "./lock-request-state.js";
import type { LockTable } from "./lock-table.js";
import type { NamespaceState } from "./namespace-state.js";
import type { PendingLock } from "./pending-lock.js";
import { fingerprintOf } from "./token-fingerprint.js";

/** The holders a revoke names, found before anything is released. */
export interface RevokeTargets {
  /** Waiting all-or-none requests holding a named descriptor: ended first (see {@link findRevokeTargets}). */
  readonly acquiring: LockRequestState[];
  /** Live tokens named by fingerprint or holding a named descriptor. */
  readonly tokens: LockRequestState[];
  /** Asked fingerprints or descriptors that matched no holder. */
  readonly notFound: string[];
}

/**
 * Find what a revoke releases, changing nothing. By fingerprint: one walk of the live tokens,
 * first comparing only fingerprints already computed (an operator's fingerprint usually comes from
 * an inspection page, which computed it), then, only if some are still missing, hashing the rest.
 * By descriptor: one walk of the live tokens and one of the waiting requests.
 */
export function findRevokeTargets(ns: NamespaceState, request: RevokeRequest): RevokeTargets {
  const tokens: LockRequestState[] = [];
  const acquiring: LockRequestState[] = [];
  if (request.fingerprints !== undefined) {
    const missing = new Set(request.fingerprints);
    for (const pass of [false, true]) {
      if (missing.size === 0) break;
      for (const req of ns.tokens.values()) {
        if (req.fingerprint === "" && !pass) continue;
        const fp = fingerprintOf(req);
        if (missing.delete(fp)) tokens.push(req);
      }
    }
    return { tokens, acquiring, notFound: [...missing] };
  }
  const wanted = new Set(request.descriptors ?? []);
  const matched = new Set<string>();
  const holds = (req: LockRequestState): boolean => {
    let hit = false;
    for (let i = 0; i < req.heldCount; i++) {
      const key = req.heldAt(i).key;
      if (wanted.has(key)) {
        matched.add(key);
        hit = true;
      }
    }
    return hit;
  };
  for (const req of ns.waiting) if (req.heldCount > 0 && holds(req)) acquiring.push(req);
  for (const req of ns.tokens.values()) if (req.startTimestamp === 0 && holds(req)) tokens.push(req);
  return { tokens, acquiring, notFound: [...wanted].filter((d) => !matched.has(d)) };
}

/** What the answer and the log say of one released holder; computed before it is released. */
export function describeRevoked(req: LockRequestState, now: number): RevokedHolder {
  const acquiring = req.status === WAITING;
  const descriptors: string[] = new Array<string>(req.heldCount);
  for (let i = 0; i < req.heldCount; i++) descriptors[i] = req.heldAt(i).key;
  const out: { -readonly [K in keyof RevokedHolder]: RevokedHolder[K] } = {
    descriptors,
    heldForMs: Math.max(0, Math.floor(now - (acquiring ? req.arrivedAt : req.grantedAt))),
  };
  if (req.status === HELD) out.fingerprint = fingerprintOf(req);
  if (acquiring) out.acquiring = true;
  if (req.startTimestamp !== 0) out.startTimestamp = req.startTimestamp;
  if (req.clientDescription !== undefined) out.clientDescription = req.clientDescription;
  return out;
}

/**
 * Release what {@link findRevokeTargets} found, in its order: waiting all-or-none requests first
 * (they leave every queue, release their partial holds and settle `timeout` through `onSettled`),
 * then the named tokens, whole. Waiters are granted at once, as on unlock. Answers what was
 * released, each described before its release; a target no longer waiting or held is skipped.
 */
export function releaseRevoked(
  table: LockTable,
  targets: RevokeTargets,
  now: number,
  settle: (pending: PendingLock) => void,
): RevokedHolder[] {
  const revoked: RevokedHolder[] = [];
  // Waiting ones first: releasing a token could complete a waiting request that holds a named
  // descriptor, which would then keep it.
  for (const req of targets.acquiring) {
    if (req.status !== WAITING) continue;
    revoked.push(describeRevoked(req, now));
    settle(table.endWaiting(req, "revoke"));
  }
  for (const req of targets.tokens) {
    if (req.status !== HELD) continue;
    revoked.push(describeRevoked(req, now));
    table.releaseToken(req, "revoke");
  }
  return revoked;
}
