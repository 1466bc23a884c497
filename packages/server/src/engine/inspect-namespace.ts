import {
  MAX_LISTED_PER_DESCRIPTOR,
  type DescriptorInspection,
  type ImmutableLockInspection,
  type LockHolder,
  type LockSpec,
  type LockWaiter,
  type NamespaceLocksQuery,
  type NamespaceLocksResponse,
  type NamespaceSummary,
  type WatcherInspection,
} from "@leasehold/protocol";
import type { DescriptorState } from "./descriptor-state.js";
import { PERMIT, modeName } from "./lock-mode-codes.js";
import type { LockRequestState } from "./lock-request-state.js";
import type { NamespaceState } from "./namespace-state.js";
import { SmallestAfter } from "./smallest-after.js";
import { fingerprintOf } from "./token-fingerprint.js";

/*
 * Read-only pictures of a namespace for operators (docs/protocol.md "Inspection and revoke",
 * ADR 0006). Nothing here changes the lock table (fingerprints are cached on the requests, which
 * is invisible), and nothing copies or sorts a whole namespace: a page is one walk with a bounded
 * heap. Times are whole milliseconds on the engine's clock.
 */

const ms = (duration: number): number => Math.max(0, Math.floor(duration));

/** Counts of one namespace; the oldest hold and longest wait are the first entries of its insertion-ordered maps. */
export function summarizeNamespace(ns: NamespaceState, now: number): NamespaceSummary {
  const summary: { -readonly [K in keyof NamespaceSummary]: NamespaceSummary[K] } = {
    namespace: ns.name,
    heldLocks: ns.heldLocks,
    heldTokens: ns.tokens.size,
    waitingRequests: ns.waiting.size,
    immutableTimestampLocks: ns.immutableCount,
  };
  // Tokens enter the map when granted and waiting requests when they arrive, so the first entry
  // of each is the oldest: no walk needed.
  for (const req of ns.tokens.values()) {
    summary.oldestHoldMs = ms(now - req.grantedAt);
    break;
  }
  for (const req of ns.waiting) {
    summary.longestWaitMs = ms(now - req.arrivedAt);
    break;
  }
  return summary;
}

/** An empty page of the asked view, for a namespace never used (looking does not create it). */
export function emptyPage(namespace: string, query: NamespaceLocksQuery): NamespaceLocksResponse {
  const summary: NamespaceSummary = { namespace, heldLocks: 0, heldTokens: 0, waitingRequests: 0, immutableTimestampLocks: 0 };
  if (query.view === "watchers") return { namespace, view: "watchers", summary, watchers: [] };
  if (query.view === "immutable") return { namespace, view: "immutable", summary, immutableTimestampLocks: [] };
  return { namespace, view: "descriptors", summary, descriptors: [] };
}

/** One page of the asked view of a namespace. */
export function inspectNamespace(ns: NamespaceState, query: NamespaceLocksQuery, now: number): NamespaceLocksResponse {
  const summary = summarizeNamespace(ns, now);
  if (query.view === "watchers") {
    const { items, nextCursor } = watchersPage(ns, query, now);
    return withCursor({ namespace: ns.name, view: "watchers", summary, watchers: items }, nextCursor);
  }
  if (query.view === "immutable") {
    const { items, nextCursor } = immutablePage(ns, query, now);
    return withCursor({ namespace: ns.name, view: "immutable", summary, immutableTimestampLocks: items }, nextCursor);
  }
  const { items, nextCursor } = descriptorsPage(ns, query, now);
  return withCursor({ namespace: ns.name, view: "descriptors", summary, descriptors: items }, nextCursor);
}

function withCursor<T extends object>(page: T, nextCursor: string | undefined): T & { nextCursor?: string } {
  return nextCursor === undefined ? page : { ...page, nextCursor };
}

interface Page<T> {
  readonly items: T[];
  readonly nextCursor: string | undefined;
}

function inUse(d: DescriptorState): boolean {
  return d.holderCount > 0 || d.queueHead !== null || d.watchers !== null;
}

/**
 * Descriptors after the cursor, ascending: one walk of the descriptor map (or, for
 * `contended`, of the waiting requests) through a heap of `limit + 1` (the extra one says whether
 * another page follows), then one walk of the live tokens and waiting requests for the holders of
 * the chosen few, stopping as soon as every holder of theirs has been seen.
 */
function descriptorsPage(ns: NamespaceState, query: NamespaceLocksQuery, now: number): Page<DescriptorInspection> {
  const pick = new SmallestAfter<DescriptorState>(query.cursor, query.limit + 1);
  const prefix = query.prefix;
  const offer = (d: DescriptorState | undefined): void => {
    if (d === undefined || !inUse(d)) return;
    if (prefix !== undefined && !d.key.startsWith(prefix)) return;
    pick.offer(d.key, d);
  };
  if (query.contended) {
    for (const req of ns.waiting) {
      if (req.queuedOn !== null) offer(req.queuedOn);
      if (req.watching && req.specs !== null) for (const spec of req.specs) offer(ns.descriptors.get(spec.descriptor));
    }
  } else {
    for (const d of ns.descriptors.values()) offer(d);
  }
  const chosen = pick.sorted();
  const more = chosen.length > query.limit;
  if (more) chosen.length = query.limit;
  const holders = holdersOf(ns, chosen, now);
  const items = chosen.map((d) => describe(d, holders.get(d) ?? [], now));
  return { items, nextCursor: more ? (chosen[chosen.length - 1] as DescriptorState).key : undefined };
}

function holdersOf(ns: NamespaceState, chosen: readonly DescriptorState[], now: number): Map<DescriptorState, LockHolder[]> {
  const lists = new Map<DescriptorState, LockHolder[]>();
  let unseen = 0;
  for (const d of chosen) {
    lists.set(d, []);
    unseen += d.holderCount;
  }
  const collect = (req: LockRequestState, acquiring: boolean): void => {
    for (let i = 0; i < req.heldCount; i++) {
      const list = lists.get(req.held[i] as DescriptorState);
      if (list === undefined) continue;
      unseen--;
      if (list.length >= MAX_LISTED_PER_DESCRIPTOR) continue;
      const a = req.acquired[i];
      if (a === undefined) continue;
      list.push(holder(req, a.mode, a.fencingToken, acquiring, now));
    }
  };
  // Waiting requests first: there are few of them, and their partial holds are often the ones
  // that explain a stuck queue.
  for (const req of ns.waiting) if (unseen > 0) collect(req, true);
  for (const req of ns.tokens.values()) {
    if (unseen <= 0) break;
    if (req.startTimestamp === 0) collect(req, false);
  }
  for (const list of lists.values()) list.sort((a, b) => a.fencingToken - b.fencingToken);
  return lists;
}

function holder(req: LockRequestState, mode: LockHolder["mode"], fencingToken: number, acquiring: boolean, now: number): LockHolder {
  const h: { -readonly [K in keyof LockHolder]: LockHolder[K] } = { mode, fencingToken, heldForMs: 0 };
  if (acquiring) {
    h.heldForMs = ms(now - req.arrivedAt);
    h.acquiring = true;
  } else {
    h.fingerprint = fingerprintOf(req);
    h.heldForMs = ms(now - req.grantedAt);
    h.leaseLeftMs = ms(req.expiresAt - now);
  }
  if (req.clientDescription !== undefined) h.clientDescription = req.clientDescription;
  return h;
}

function describe(d: DescriptorState, holders: LockHolder[], now: number): DescriptorInspection {
  const waiters: LockWaiter[] = [];
  let queueLength = 0;
  for (let q = d.queueHead; q !== null; q = q.queueNext) {
    queueLength++;
    if (waiters.length >= MAX_LISTED_PER_DESCRIPTOR) continue;
    const w: { -readonly [K in keyof LockWaiter]: LockWaiter[K] } = {
      mode: modeName(q.queueMode),
      waitingForMs: ms(now - q.arrivedAt),
      deadlineLeftMs: ms(q.deadline - now),
    };
    if (q.clientDescription !== undefined) w.clientDescription = q.clientDescription;
    waiters.push(w);
  }
  const isPermit = d.holderMode === PERMIT || holders.some((h) => h.mode === "permit") || waiters.some((w) => w.mode === "permit");
  const base = { descriptor: d.key, holderCount: d.holderCount, holders, queueLength, waiters, watchers: d.watchers?.size ?? 0 };
  return isPermit ? { ...base, limit: d.limit } : base;
}

/** Waiting as-many-as-possible requests in arrival order, after the cursor (a wait serial). */
function watchersPage(ns: NamespaceState, query: NamespaceLocksQuery, now: number): Page<WatcherInspection> {
  const after = query.cursor === undefined ? 0 : Number(query.cursor);
  const items: WatcherInspection[] = [];
  let last: LockRequestState | null = null;
  let more = false;
  for (const req of ns.waiting) {
    if (!req.watching || req.waitSerial <= after || req.specs === null) continue;
    if (query.prefix !== undefined && !watches(req.specs, query.prefix)) continue;
    if (items.length === query.limit) {
      more = true;
      break;
    }
    const w: { -readonly [K in keyof WatcherInspection]: WatcherInspection[K] } = {
      descriptorCount: req.specs.length,
      firstDescriptor: (req.specs[0] as LockSpec).descriptor,
      max: req.max,
      waitingForMs: ms(now - req.arrivedAt),
      deadlineLeftMs: ms(req.deadline - now),
    };
    if (req.clientDescription !== undefined) w.clientDescription = req.clientDescription;
    items.push(w);
    last = req;
  }
  return { items, nextCursor: more && last !== null ? String(last.waitSerial) : undefined };
}

function watches(specs: readonly LockSpec[], prefix: string): boolean {
  for (const spec of specs) if (spec.descriptor.startsWith(prefix)) return true;
  return false;
}

/** Live immutable-timestamp locks after the cursor (a start timestamp), ascending. */
function immutablePage(ns: NamespaceState, query: NamespaceLocksQuery, now: number): Page<ImmutableLockInspection> {
  const locks = ns.immutablesAfter(query.cursor === undefined ? 0 : Number(query.cursor), query.limit + 1);
  const more = locks.length > query.limit;
  if (more) locks.length = query.limit;
  const items = locks.map((lock) => ({
    startTimestamp: lock.startTimestamp,
    fingerprint: fingerprintOf(lock),
    heldForMs: ms(now - lock.grantedAt),
    leaseLeftMs: ms(lock.expiresAt - now),
  }));
  return { items, nextCursor: more ? String((locks[locks.length - 1] as LockRequestState).startTimestamp) : undefined };
}
