import { randomBytes } from "node:crypto";
import {
  ShardCountMismatchError,
  type AcquiredTerm,
  type HandedOverTerm,
  type HeldTerm,
  type ImmutableRecord,
  type LeaderTerm,
  type LeaseClaim,
  type LiveMember,
  type LoadedBound,
  type MemberIdentity,
  type MemberInfo,
  type MemberRow,
  type ShardLease,
  type StoredBound,
} from "../coordinator.js";

/** A lease row as the store keeps it (the columns of the PostgreSQL `leases` table). */
interface LeaseRow {
  readonly shard: number;
  holder: string | null;
  url: string | null;
  leaderId: string | null;
  incarnation: string | null;
  epoch: number;
  version: number;
  /** On the store's clock (ms); `-Infinity` when released or never held. */
  expiresAt: number;
  transitions: number;
  lockLeaseMs: number;
  validForMs: number;
  validForEpoch: number | null;
  standbyId: string | null;
  standbyIncarnation: string | null;
  inSync: boolean;
  syncRound: number;
}

interface MemberEntry {
  readonly serverId: string;
  url: string;
  heartbeatAt: number;
  ready: boolean;
  incarnation: string | null;
}

interface BoundRow {
  bound: number;
  immutable: number | null;
  epoch: number;
}

/** What {@link MemoryStore} is made with. */
export interface MemoryStoreOptions {
  /** The database's clock (`clock_timestamp()`), in ms. */
  readonly now: () => number;
  /** The cluster key's bytes. Default: 32 random bytes (a simulator passes seeded ones, for repeatable runs). */
  readonly key?: Buffer | undefined;
}

/**
 * The database of a cluster, in memory: the tables of postgres/postgres-schema.ts and every
 * statement the PostgreSQL coordinator runs, each as one synchronous step with the same conditions
 * (epoch and holder fences, versions, expiry on the database's clock, the lease-wait record, the
 * standby fields). A statement is atomic here, so statements that would block on one another's row locks
 * (`FOR UPDATE`, `FOR SHARE`) run in some serial order, as PostgreSQL's locks make them. What a
 * statement's caller learns (late, never, or an error after it committed) is the business of the
 * link between a member and the store (memory-coordinator.ts), not of the store.
 */
export class MemoryStore {
  private shardCount: number | null = null;
  private readonly leases: LeaseRow[] = [];
  private readonly members = new Map<string, MemberEntry>();
  private readonly bounds = new Map<string, BoundRow>();
  private readonly key: Buffer;
  private readonly listeners = new Set<(shard: number) => void>();

  constructor(private readonly options: MemoryStoreOptions) {
    this.key = options.key ?? randomBytes(32);
  }

  private get now(): number {
    return this.options.now();
  }

  /** `NOTIFY` of a released or handed-over shard: every listener hears it (the link decides when). */
  onRelease(listener: (shard: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private notify(shard: number): void {
    for (const listener of [...this.listeners]) listener(shard);
  }

  start(shards: number | undefined, defaultShards: number): number {
    this.shardCount ??= shards ?? defaultShards;
    if (shards !== undefined && shards !== this.shardCount) throw new ShardCountMismatchError(this.shardCount, shards);
    for (let shard = this.leases.length; shard < this.shardCount; shard++) {
      this.leases.push({
        shard, holder: null, url: null, leaderId: null, incarnation: null, epoch: 0, version: 0, expiresAt: -Infinity, transitions: 0,
        lockLeaseMs: 0, validForMs: 0, validForEpoch: null, standbyId: null, standbyIncarnation: null, inSync: false, syncRound: 0,
      });
    }
    return this.shardCount;
  }

  private fresh(m: MemberEntry, withinMs: number): boolean {
    return m.heartbeatAt > this.now - withinMs;
  }

  heartbeat(member: MemberInfo, withinMs: number): LiveMember[] {
    const row = this.members.get(member.serverId);
    let wrote = false;
    if (row === undefined || row.incarnation === null || row.incarnation === member.incarnation || row.heartbeatAt <= this.now - withinMs) {
      this.members.set(member.serverId, { serverId: member.serverId, url: member.url, heartbeatAt: this.now, ready: member.ready, incarnation: member.incarnation });
      wrote = true;
    }
    const live: LiveMember[] = [];
    for (const m of this.members.values()) {
      if (m.serverId === member.serverId) continue;
      if (this.fresh(m, withinMs)) live.push({ serverId: m.serverId, ready: m.ready, incarnation: m.incarnation, url: m.url });
    }
    if (wrote) live.push({ serverId: member.serverId, ready: member.ready, incarnation: member.incarnation, url: member.url });
    return live.sort((x, y) => (x.serverId < y.serverId ? -1 : x.serverId > y.serverId ? 1 : 0));
  }

  leave(member: MemberIdentity): void {
    if (this.members.get(member.serverId)?.incarnation === member.incarnation) this.members.delete(member.serverId);
  }

  readMembers(withinMs: number, limit: number): MemberRow[] {
    return this.sortedMembers()
      .filter((m) => this.fresh(m, withinMs))
      .slice(0, limit)
      .map((m) => ({ serverId: m.serverId, url: m.url, ready: m.ready, heartbeatAgeMs: Math.max(0, Math.floor(this.now - m.heartbeatAt)) }));
  }

  readStandbyCandidates(withinMs: number): MemberInfo[] {
    return this.sortedMembers()
      .filter((m) => this.fresh(m, withinMs) && m.incarnation !== null)
      .map((m) => ({ serverId: m.serverId, url: m.url, incarnation: m.incarnation!, ready: m.ready }));
  }

  private sortedMembers(): MemberEntry[] {
    return [...this.members.values()].sort((x, y) => (x.serverId < y.serverId ? -1 : x.serverId > y.serverId ? 1 : 0));
  }

  readLeases(): ShardLease[] {
    return this.leases.map((r) => ({
      shard: r.shard, holder: r.holder, url: r.url, leaderId: r.leaderId, incarnation: r.incarnation, epoch: r.epoch, version: r.version,
      expired: r.holder === null || r.expiresAt <= this.now, transitions: r.transitions,
      standbyId: r.standbyId, standbyIncarnation: r.standbyIncarnation, inSync: r.inSync,
    }));
  }

  private clearStandby(r: LeaseRow): void {
    r.standbyId = null;
    r.standbyIncarnation = null;
    r.inSync = false;
    r.syncRound = 0;
  }

  /** A new term in row `r` (an acquisition or a hand-over): its holder, epoch + 1, a fresh expiry, no standby. */
  private nextTerm(r: LeaseRow, holder: string, url: string, incarnation: string, leaderLeaseMs: number): void {
    r.holder = holder;
    r.url = url;
    r.incarnation = incarnation;
    r.epoch += 1;
    r.version += 1;
    r.transitions += 1;
    r.expiresAt = this.now + leaderLeaseMs;
    this.clearStandby(r);
  }

  private live(r: LeaseRow): boolean {
    return r.holder !== null && r.expiresAt > this.now;
  }

  acquire(shard: number, seen: number, claim: LeaseClaim): AcquiredTerm | null {
    const r = this.leases[shard];
    if (r === undefined || r.version !== seen || this.live(r)) return null;
    if (claim.withState === true && !(r.leaderId === claim.leaderId && r.standbyId === claim.serverId && r.standbyIncarnation === claim.incarnation && r.inSync)) return null;
    const waitMs = r.validForEpoch === r.epoch ? r.validForMs : Math.max(r.validForMs, r.lockLeaseMs);
    r.leaderId = claim.leaderId;
    this.nextTerm(r, claim.serverId, claim.url, claim.incarnation, claim.leaderLeaseMs);
    r.lockLeaseMs = Math.max(r.lockLeaseMs, Math.ceil(claim.lockLeaseMs));
    r.validForMs = Math.max(waitMs, Math.ceil(claim.validForMs));
    r.validForEpoch = r.epoch;
    return { shard, epoch: r.epoch, lockDelayMs: waitMs };
  }

  settleLeaseWait(term: HeldTerm, validForMs: number): boolean {
    const r = this.leases[term.shard];
    if (r === undefined || r.epoch !== term.epoch || r.validForEpoch !== term.epoch) return false;
    r.validForMs = Math.ceil(validForMs);
    return true;
  }

  renew(serverId: string, terms: readonly HeldTerm[], leaderLeaseMs: number): number[] {
    const renewed: number[] = [];
    for (const t of terms) {
      const r = this.leases[t.shard];
      if (r === undefined || r.holder !== serverId || r.epoch !== t.epoch || r.expiresAt <= this.now) continue;
      r.expiresAt = this.now + leaderLeaseMs;
      r.version += 1;
      renewed.push(t.shard);
    }
    return renewed;
  }

  release(serverId: string, terms: readonly HeldTerm[]): void {
    for (const t of terms) {
      const r = this.leases[t.shard];
      if (r === undefined || r.holder !== serverId || r.epoch !== t.epoch) continue;
      r.holder = null;
      r.url = null;
      r.leaderId = null;
      r.incarnation = null;
      r.expiresAt = -Infinity;
      r.version += 1;
      this.clearStandby(r);
      this.notify(t.shard);
    }
  }

  readBound(namespace: string): StoredBound {
    const b = this.bounds.get(namespace);
    return b === undefined ? { bound: 0, immutable: null, epoch: 0 } : { ...b };
  }

  /** The fence of a bound write: the shard's row is live at `epoch` (`unfenced`: at any epoch, the `epoch-fence` break). */
  private fenced(term: HeldTerm, unfenced = false): boolean {
    const r = this.leases[term.shard];
    return r !== undefined && (unfenced || r.epoch === term.epoch) && this.live(r);
  }

  extendBound(namespace: string, term: HeldTerm, from: number, to: number, immutable: number | undefined, unfenced = false): boolean {
    if (!this.fenced(term, unfenced)) return false;
    const b = this.bounds.get(namespace);
    if (from === 0) {
      if (b !== undefined) return false;
      this.bounds.set(namespace, { bound: to, immutable: immutable ?? null, epoch: term.epoch });
      return true;
    }
    if (b === undefined || b.bound !== from) return false;
    b.bound = to;
    b.epoch = term.epoch;
    // SQL's LEAST ignores NULLs: a NULL stored value takes the new one, a NULL new one keeps it.
    if (immutable !== undefined) b.immutable = b.immutable === null ? immutable : Math.min(b.immutable, immutable);
    return true;
  }

  loadBounds(term: HeldTerm, namespaces: readonly string[], block: number, unfenced = false): LoadedBound[] {
    if (namespaces.length === 0 || !this.fenced(term, unfenced)) return [];
    return this.loadFenced(term.epoch, namespaces, block);
  }

  /** `boundLoadSql` once its fence matched. */
  private loadFenced(epoch: number, namespaces: readonly string[], block: number): LoadedBound[] {
    const loaded: LoadedBound[] = [];
    for (const namespace of new Set(namespaces)) {
      const b = this.bounds.get(namespace);
      if (b === undefined) {
        const to = Math.min(Number.MAX_SAFE_INTEGER, block);
        this.bounds.set(namespace, { bound: to, immutable: 1, epoch });
        loaded.push({ namespace, floor: 0, immutable: null, to });
      } else if (b.epoch <= epoch) {
        const floor = b.bound;
        const before = b.immutable;
        b.bound = Math.min(Number.MAX_SAFE_INTEGER, floor + block);
        b.epoch = epoch;
        b.immutable = before === null ? floor + 1 : Math.min(before, floor + 1);
        loaded.push({ namespace, floor, immutable: before, to: b.bound });
      }
    }
    return loaded;
  }

  recordImmutable(entries: readonly ImmutableRecord[]): string[] {
    const recorded: string[] = [];
    for (const e of entries) {
      const b = this.bounds.get(e.namespace);
      if (b === undefined || !this.fenced(e.term)) continue;
      b.immutable = e.immutable;
      recorded.push(e.namespace);
    }
    return recorded;
  }

  importBound(namespace: string, bound: number, shard: number): boolean {
    const r = this.leases[shard];
    if (r === undefined || this.live(r)) return false;
    const b = this.bounds.get(namespace);
    if (b === undefined) this.bounds.set(namespace, { bound, immutable: null, epoch: 0 });
    else b.bound = Math.max(b.bound, bound);
    return true;
  }

  readClusterKey(): Buffer {
    return Buffer.from(this.key);
  }

  /** A leader's write is fenced by its term: the row is still this epoch's, holder's and incarnation's. */
  private leaderRow(term: LeaderTerm): LeaseRow | null {
    const r = this.leases[term.shard];
    return r !== undefined && r.epoch === term.epoch && r.holder === term.serverId && r.incarnation === term.incarnation ? r : null;
  }

  nameStandby(term: LeaderTerm, standby: MemberIdentity | null, round: number): boolean {
    const r = this.leaderRow(term);
    if (r === null || r.syncRound >= round) return false;
    r.standbyId = standby?.serverId ?? null;
    r.standbyIncarnation = standby?.incarnation ?? null;
    r.inSync = false;
    r.syncRound = round;
    r.version += 1;
    return true;
  }

  setInSync(term: LeaderTerm, standbyIncarnation: string, inSync: boolean, round: number): boolean {
    const r = this.leaderRow(term);
    if (r === null || r.syncRound >= round || (inSync && r.standbyIncarnation !== standbyIncarnation)) return false;
    r.inSync = inSync;
    r.syncRound = round;
    r.version += 1;
    return true;
  }

  moveStandby(term: LeaderTerm, from: MemberIdentity, to: MemberIdentity, round: number): boolean {
    const r = this.leaderRow(term);
    if (r === null || r.syncRound >= round || !r.inSync) return false;
    const names = (m: MemberIdentity): boolean => r.standbyId === m.serverId && r.standbyIncarnation === m.incarnation;
    if (!names(from) && !names(to)) return false;
    r.standbyId = to.serverId;
    r.standbyIncarnation = to.incarnation;
    r.syncRound = round;
    r.version += 1;
    return true;
  }

  handOver(term: LeaderTerm, standby: MemberIdentity, leaderLeaseMs: number, formerAsStandby = false, round?: number): HandedOverTerm | null {
    const r = this.leaderRow(term);
    if (r === null || r.standbyId !== standby.serverId || r.standbyIncarnation !== standby.incarnation || !r.inSync) return null;
    if (round !== undefined && r.syncRound >= round) return null;
    const m = this.members.get(standby.serverId);
    if (m === undefined || m.incarnation !== standby.incarnation) return null;
    this.nextTerm(r, standby.serverId, m.url, standby.incarnation, leaderLeaseMs);
    if (formerAsStandby) {
      r.standbyId = term.serverId;
      r.standbyIncarnation = term.incarnation;
      r.inSync = true;
    }
    this.notify(term.shard);
    return { shard: term.shard, epoch: r.epoch, url: m.url };
  }

  adoptHandOver(
    shard: number,
    epoch: number,
    claim: LeaseClaim,
    bounds: { readonly namespaces: readonly string[]; readonly block: number } | undefined,
    clearStandby = false,
  ): (AcquiredTerm & { bounds: LoadedBound[]; standby: MemberIdentity | null }) | null {
    const r = this.leases[shard];
    if (r === undefined || r.epoch !== epoch || r.holder !== claim.serverId || r.incarnation !== claim.incarnation || r.leaderId !== claim.leaderId) return null;
    const waitMs = r.validForEpoch === r.epoch - 1 ? r.validForMs : Math.max(r.validForMs, r.lockLeaseMs);
    r.expiresAt = this.now + claim.leaderLeaseMs;
    r.version += 1;
    r.lockLeaseMs = Math.max(r.lockLeaseMs, Math.ceil(claim.lockLeaseMs));
    r.validForMs = Math.max(waitMs, Math.ceil(claim.validForMs));
    r.validForEpoch = r.epoch;
    // An in-sync standby (the former leader of a balance move) stays named: the taker resumes to it.
    const keep = !clearStandby && r.inSync && r.standbyId !== null && r.standbyIncarnation !== null;
    const standby = keep ? { serverId: r.standbyId!, incarnation: r.standbyIncarnation! } : null;
    if (keep) r.syncRound = 0;
    else this.clearStandby(r);
    return { shard, epoch: r.epoch, lockDelayMs: waitMs, bounds: this.loadFenced(epoch, bounds?.namespaces ?? [], bounds?.block ?? 1), standby };
  }
}
