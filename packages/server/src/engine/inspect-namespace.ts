import {
  MAX_LISTED_PER_DESCRIPTOR,
  type DescriptorInspection,
  type DescriptorsPage,
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
import { DONE, HELD, WAITING, type LockRequestState } from "./lock-request-state.js";
import type { NamespaceState } from "./namespace-state.js";
import type { PendingLock } from "./pending-lock.js";
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

/** One page of the asked view of a namespace, built in one go. */
export function inspectNamespace(ns: NamespaceState, query: NamespaceLocksQuery, now: number): NamespaceLocksResponse {
  if (query.view === "descriptors") {
    const builder = new DescriptorsPageBuilder(ns, query);
    while (!builder.step(Infinity));
    return builder.finish(now);
  }
  const summary = summarizeNamespace(ns, now);
  if (query.view === "watchers") {
    const { items, nextCursor } = watchersPage(ns, query, now);
    return withCursor({ namespace: ns.name, view: "watchers", summary, watchers: items }, nextCursor);
  }
  const { items, nextCursor } = immutablePage(ns, query, now);
  return withCursor({ namespace: ns.name, view: "immutable", summary, immutableTimestampLocks: items }, nextCursor);
}

function withCursor<T extends object>(page: T, nextCursor: string | undefined): T & { nextCursor?: string | undefined } {
  return nextCursor === undefined ? page : { ...page, nextCursor };
}

interface Page<T> {
  readonly items: T[];
  readonly nextCursor: string | undefined;
}

/**
 * Builds one `descriptors` page in steps, so a host can spread the walk of a huge namespace over
 * several turns of its event loop instead of stalling every lock request behind it (ADR 0006).
 * Phase 1 walks the descriptor map (or, for `contended`, the waiting requests) through a heap of
 * `limit + 1` (the extra one says whether another page follows); phase 2 walks the waiting
 * requests and live tokens for the chosen descriptors' holders, stopping once it has seen as many
 * holds as they had when it began. Map iterators stay valid while the table changes (entries added
 * meanwhile are visited, deleted ones skipped), and {@link finish} keeps only what is still true
 * then: a page shows the table as it was while the page was built.
 */
export class DescriptorsPageBuilder {
  private readonly pick: SmallestAfter<DescriptorState>;
  private phase: 1 | 2 | 3 = 1;
  private source: Iterator<DescriptorState | LockRequestState>;
  private chosen: DescriptorState[] = [];
  private more = false;
  private readonly holders = new Map<DescriptorState, LockRequestState[]>();
  private unseen = 0;
  private waitingDone = false;

  constructor(
    private readonly ns: NamespaceState,
    private readonly query: NamespaceLocksQuery,
  ) {
    this.pick = new SmallestAfter<DescriptorState>(query.cursor, query.limit + 1);
    this.source = query.contended ? ns.waiting.values() : ns.descriptors.values();
  }

  /** Do at most about `budget` visits; true once the page is ready for {@link finish}. */
  step(budget: number): boolean {
    for (let n = 0; n < budget && this.phase !== 3; n++) {
      const next = this.source.next();
      if (next.done === true) this.endPhase();
      else if (this.phase === 1) this.choose(next.value);
      else this.collect(next.value as LockRequestState);
    }
    return this.phase === 3;
  }

  /** The page, from what is true now (`now` on the engine's clock). Call once {@link step} said true. */
  finish(now: number): DescriptorsPage {
    const items = this.chosen.map((d) => {
      const live = (this.holders.get(d) ?? []).filter((req) => req.status !== DONE && holdsAt(req, d) >= 0);
      return describe(d, live.slice(0, MAX_LISTED_PER_DESCRIPTOR).map((req) => holder(req, holdsAt(req, d), now)).sort((a, b) => a.fencingToken - b.fencingToken), now);
    });
    const last = this.chosen[this.chosen.length - 1];
    const page: DescriptorsPage = { namespace: this.ns.name, view: "descriptors", summary: summarizeNamespace(this.ns, now), descriptors: items };
    return this.more && last !== undefined ? { ...page, nextCursor: last.key } : page;
  }

  private choose(value: DescriptorState | LockRequestState): void {
    if (!this.query.contended) return this.offer(value as DescriptorState);
    const req = value as LockRequestState;
    const pending = req.pending;
    if (pending === null) return;
    if (pending.queuedOn !== null) this.offer(pending.queuedOn);
    if (pending.watching && req.specs !== null) for (const spec of req.specs) this.offer(this.ns.descriptors.get(spec.descriptor));
  }

  private offer(d: DescriptorState | undefined): void {
    if (d === undefined || (d.holderCount === 0 && d.queueHead === null && d.watchers === null)) return;
    if (this.query.prefix !== undefined && !d.key.startsWith(this.query.prefix)) return;
    this.pick.offer(d.key, d);
  }

  private collect(req: LockRequestState): void {
    for (let i = 0; i < req.heldCount; i++) {
      const list = this.holders.get(req.heldAt(i));
      if (list === undefined) continue;
      this.unseen--;
      if (list.length < MAX_LISTED_PER_DESCRIPTOR) list.push(req);
    }
    if (this.unseen <= 0) this.phase = 3;
  }

  private endPhase(): void {
    if (this.phase === 1) {
      const chosen = this.pick.sorted();
      this.more = chosen.length > this.query.limit;
      if (this.more) chosen.length = this.query.limit;
      // Still in use? A descriptor chosen early in a long walk may have been released since.
      this.chosen = chosen.filter((d) => d.holderCount > 0 || d.queueHead !== null || d.watchers !== null);
      for (const d of this.chosen) {
        this.holders.set(d, []);
        this.unseen += d.holderCount;
      }
      this.phase = this.unseen > 0 ? 2 : 3;
      // Waiting requests first: there are few, and their partial holds often explain a stuck queue.
      this.source = this.ns.waiting.values();
      return;
    }
    if (!this.waitingDone) {
      this.waitingDone = true;
      this.source = this.ns.tokens.values();
      return;
    }
    this.phase = 3;
  }
}

/** Index among `req`'s holds of `d`, or -1 (the request no longer holds it). */
function holdsAt(req: LockRequestState, d: DescriptorState): number {
  for (let i = 0; i < req.heldCount; i++) if (req.heldAt(i) === d) return i;
  return -1;
}

function holder(req: LockRequestState, index: number, now: number): LockHolder {
  const h: { -readonly [K in keyof LockHolder]: LockHolder[K] } = {
    mode: modeName(req.heldAt(index).holderMode),
    fencingToken: req.fencingAt(index),
    heldForMs: 0,
  };
  if (req.status === WAITING) {
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
      waitingForMs: ms(now - q.request.arrivedAt),
      deadlineLeftMs: ms(q.deadline - now),
    };
    if (q.request.clientDescription !== undefined) w.clientDescription = q.request.clientDescription;
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
  let last: PendingLock | null = null;
  let more = false;
  for (const req of ns.waiting) {
    const pending = req.pending;
    if (pending === null || !pending.watching || pending.waitSerial <= after || req.specs === null) continue;
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
      deadlineLeftMs: ms(pending.deadline - now),
    };
    if (req.clientDescription !== undefined) w.clientDescription = req.clientDescription;
    items.push(w);
    last = pending;
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

/**
 * Counts of up to `limit` namespaces with names after `cursor`, ascending, among those `visible`
 * accepts: one walk of the namespaces through a bounded heap, so a page costs O(namespaces · log
 * limit) time and O(limit) memory however many namespaces there are.
 */
export function pageOfNamespaces(
  namespaces: Iterable<NamespaceState>,
  cursor: string | undefined,
  limit: number,
  visible: (namespace: string) => boolean,
  now: number,
): { namespaces: NamespaceSummary[]; more: boolean } {
  const pick = new SmallestAfter<NamespaceState>(cursor, limit + 1);
  for (const ns of namespaces) if (visible(ns.name)) pick.offer(ns.name, ns);
  const chosen = pick.sorted();
  const more = chosen.length > limit;
  if (more) chosen.length = limit;
  return { namespaces: chosen.map((ns) => summarizeNamespace(ns, now)), more };
}

/**
 * Steps that compute the fingerprint of every held token of `ns` that has none yet, at most
 * `budget` tokens a step (true once done), so the host can keep its event loop free between them.
 */
export function fingerprintSteps(ns: NamespaceState | undefined): { step(budget: number): boolean } {
  const tokens = ns?.tokens.values();
  return {
    step(budget) {
      if (tokens === undefined) return true;
      for (let n = 0; n < budget; n++) {
        const next = tokens.next();
        if (next.done === true) return true;
        if (next.value.status === HELD) fingerprintOf(next.value);
      }
      return false;
    },
  };
}
