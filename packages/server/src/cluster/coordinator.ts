/**
 * What a cluster of leasehold servers needs from the store that decides who leads each shard and
 * keeps the durable timestamp bounds (DESIGN.md "Cluster mode"). PostgreSQL implements it
 * ({@link createPostgresCoordinator}); another engine (etcd) can be added behind the same
 * interface without touching the engine, the cluster runtime or the HTTP layer.
 *
 * Every statement may fail (the store is down, the connection was cut): callers treat a rejected
 * promise as "outcome unknown" and never as "did not happen". Times in answers are on the store's
 * clock only where they say so; the runtime keeps its own safety timing on its monotonic clock.
 */
export interface Coordinator {
  /**
   * Create the tables if missing and register the shard count on first start (`shards`, or
   * {@link DEFAULT_SHARDS} when undefined). With an existing cluster, an undefined `shards` adopts
   * the stored count and a different one rejects with a {@link ShardCountMismatchError}. Resolves
   * with the cluster's shard count.
   */
  start(shards?: number | undefined): Promise<number>;
  /**
   * Record that `member` is alive now (an upsert of its heartbeat row, on the store's clock, with
   * its `ready` flag and incarnation) and, in the same statement, answer the members whose last
   * heartbeat is younger than `withinMs`, sorted by id. The row is written only when it is this
   * incarnation's, or has none, or its heartbeat is older than `withinMs`: another live process
   * with the same server id keeps its row, and this member is then *missing* from the answer (the
   * caller is a duplicate and must not lead; docs/cluster.md "Two processes with one server id").
   */
  heartbeat(member: MemberInfo, withinMs: number): Promise<LiveMember[]>;
  /**
   * Remove a member's heartbeat row (a clean stop), so the others stop counting it at once, only
   * when the row is this incarnation's. A stopping server calls it before it releases its shards:
   * the servers that hear the release then compute their shares without it.
   */
  leave(member: MemberIdentity): Promise<void>;
  /**
   * The member rows whose last heartbeat is younger than `withinMs` on the store's clock, live or
   * not (a crashed server's row stays until another process with its id takes it over), sorted
   * by id, at most `limit`. For display only (the status page): no decision depends on it.
   */
  readMembers(withinMs: number, limit: number): Promise<MemberRow[]>;
  /** Every shard's lease row, in shard order. */
  readLeases(): Promise<ShardLease[]>;
  /**
   * Take `shard` if its row is still the version `seen` (nothing changed since it was read) and it
   * is free (released, never held, or expired on the store's clock). Answers the new term, or
   * `null` when the condition matched nothing (someone else moved first, or the lease is live).
   */
  acquire(shard: number, seen: number, claim: LeaseClaim): Promise<AcquiredTerm | null>;
  /**
   * Renew, in one statement, the leases of `terms` held by `serverId` that have not expired on the
   * store's clock. Answers the shards renewed; a shard missing from it is lost.
   */
  renew(serverId: string, terms: readonly HeldTerm[], leaderLeaseMs: number): Promise<number[]>;
  /**
   * The lease-wait of `term` is over (every lease an earlier leader of the shard could have given
   * has run out): lower the shard's lease-wait record to `validForMs`, this leader's own, so a
   * later leader waits only what clients may still believe. Matches only while the row still
   * records `term.epoch`'s acquisition (a later acquisition has raised the record since). True when
   * it matched. Never bumps the row's version: it says nothing about the leader being alive.
   */
  settleLeaseWait(term: HeldTerm, validForMs: number): Promise<boolean>;
  /** Give up `terms` (holder cleared, expiry now) and notify watchers so another server takes them at once. */
  release(serverId: string, terms: readonly HeldTerm[]): Promise<void>;
  /** A namespace's stored bound and recorded immutable timestamp (`bound` 0 and `immutable` null when never stored). */
  readBound(namespace: string): Promise<StoredBound>;
  /**
   * Move a namespace's bound from `from` to `to`, in one statement that matches only while the
   * lease row of `term.shard` still has `term.epoch` (compare-and-set on the old bound and the
   * epoch). `immutable`, when given, is recorded in the same statement (the lowest of it and the
   * stored value). True when it matched; false when it matched nothing (the bound moved, or the
   * epoch is no longer the caller's: a deposed leader).
   */
  extendBound(namespace: string, term: HeldTerm, from: number, to: number, immutable?: number | undefined): Promise<boolean>;
  /**
   * Load the bounds of `namespaces` (a term's first use of them) in one statement: each namespace's
   * stored bound is read and moved `block` above it under `term.epoch`, fenced as
   * {@link extendBound} (the lease row of `term.shard` still has `term.epoch` and is live, taken
   * `FOR SHARE`), its immutable timestamp recorded as the lowest of the stored one and the old
   * bound + 1, and a namespace never stored is inserted. The bound rows are locked while read, so
   * nothing moves between the read and the extension. Answers the namespaces extended; one missing
   * from the answer (the fence matched nothing, its row names a later epoch, or an insert met a
   * concurrent one) changed nothing, and the caller loads it on its own, which tells those apart.
   */
  loadBounds(term: HeldTerm, namespaces: readonly string[], block: number): Promise<LoadedBound[]>;
  /**
   * Record immutable timestamps of namespaces, each fenced by its shard's epoch like a bound
   * extension. Answers the namespaces recorded; the others' terms are over.
   */
  recordImmutable(entries: readonly ImmutableRecord[]): Promise<string[]>;
  /**
   * Raise a namespace's stored bound to at least `bound` (never lowers it), only while `shard` (the
   * namespace's) has no live leader: a leader that loaded the namespace would keep counting below
   * the imported bound. One statement, ordered against a concurrent acquisition by a lock on the
   * shard's lease row. True when imported; false when refused (the shard has a live leader).
   */
  importBound(namespace: string, bound: number, shard: number): Promise<boolean>;
  /**
   * Call `listener(shard)` whenever a shard is released (by any server). Resolves once listening;
   * `onLost` hears when the listening connection broke (the caller then re-watches).
   */
  watch(listener: (shard: number) => void, onLost: (err: Error) => void): Promise<void>;
  /**
   * The members whose heartbeat is younger than `withinMs`, with their URL, incarnation and `ready`
   * flag, sorted by id (a leader choosing a standby names its incarnation and streams to its URL).
   */
  readStandbyCandidates(withinMs: number): Promise<MemberInfo[]>;
  /** The cluster key (created with the schema at the first start): members sign server-to-server requests with it. */
  readClusterKey(): Promise<Buffer>;
  /**
   * Name `standby` (or none, `null`) as the standby of `term`'s shard, with `in_sync` false. Fenced:
   * matches only while the row is still `term`'s (shard, epoch, holder and incarnation) and its
   * stored `sync_round` is below `round`. True when written; false when it matched nothing (a deposed
   * leader, or a later round already written).
   */
  nameStandby(term: LeaderTerm, standby: MemberIdentity | null, round: number): Promise<boolean>;
  /**
   * Record whether the standby holds every grant answered, fenced like {@link nameStandby}; `true`
   * also only while the row names the standby incarnation `standbyIncarnation`. The rounds make
   * the writes of one term land in the order the leader issued them, whatever answers were lost.
   */
  setInSync(term: LeaderTerm, standbyIncarnation: string, inSync: boolean, round: number): Promise<boolean>;
  /**
   * Move the in-sync standby of `term`'s shard from `from` to `to` in one statement, fenced like
   * {@link nameStandby} (the row still `term`'s, `sync_round` below `round`) and by the row naming
   * `from` or `to` (id and incarnation) in sync: the row names `to` in sync, `round` stored. The
   * leader sends it only once `to` holds every grant answered (a snapshot it acknowledged, then the
   * log), and waits on both standbys until its outcome is known, so whatever it did, the standby
   * the row names holds every grant answered (`ShardReplication.moveStandby`). Naming `to` already
   * also matches (a retry after an unknown outcome). True when written; false when it matched nothing.
   */
  moveStandby(term: LeaderTerm, from: MemberIdentity, to: MemberIdentity, round: number): Promise<boolean>;
  /**
   * Hand `term`'s shard to its in-sync standby in one statement fenced by the epoch: holder, URL
   * (from the standby's member row) and incarnation become the standby's, epoch + 1, a fresh expiry
   * of `leaderLeaseMs`, `leader_id` unchanged (the table moves with it); then NOTIFY as a release
   * does. Only while the row names `standby` (id and incarnation) in sync. With `formerAsStandby`
   * (a balance move: the former leader keeps its table as a replica of the new epoch) the row names
   * the former leader (`term`'s holder and incarnation) as the new epoch's in-sync standby, so a
   * taker that never adopts leaves the shard to it with the table, not to an empty takeover; else
   * the standby fields are cleared (a stopping leader keeps nothing). Answers the new term, or
   * `null` when it matched nothing. With `round` (a balance hand-over: a round of the term's sync
   * writes, `ShardReplication.rounds.take()`, sync-rounds.ts) it also matches only while the row's
   * `sync_round` is below `round`, so a write of a later round that matched fences it for good: a
   * statement whose outcome was unknown can then never commit, and the term may serve on
   * (balance-hand-over.ts). Without it (a stop's hand-over) no round is checked.
   */
  handOver(term: LeaderTerm, standby: MemberIdentity, leaderLeaseMs: number, formerAsStandby?: boolean, round?: number): Promise<HandedOverTerm | null>;
  /**
   * The standby a shard was handed to starts its term: one statement fenced by the handed-over
   * row (shard, `epoch`, holder and incarnation the claim's, `leader_id` the claim's) sets a fresh
   * expiry of `claim.leaderLeaseMs` (the serving gate counts from when it was sent), keeps an
   * in-sync standby the row names (a former leader named by {@link handOver}: it holds the table
   * as it was handed over, so a taker that fails right after adopting still leaves the shard to a
   * takeover with its locks; the taker's replication resumes to it before it answers anything,
   * `ShardReplication.resume`), or clears the standby fields when the row names none in sync or
   * `clearStandby` (TEST ONLY, `adopt-clears-former`) says so, and records the lease-wait as an
   * acquisition does (`validForMs`, complete up to this epoch) before the term serves. With `bounds`, the same statement loads those namespaces' bounds for the term as
   * {@link loadBounds} does, fenced by the adoption itself (nothing is loaded unless it matched):
   * a taker that carries them serves a round trip sooner. Answers the term with the bounds loaded
   * (none without `bounds`), or `null` when it matched nothing.
   */
  adoptHandOver(shard: number, epoch: number, claim: LeaseClaim, bounds?: BoundsToLoad | undefined, clearStandby?: boolean): Promise<AdoptedTerm | null>;
  /** Close every connection. */
  close(): Promise<void>;
}

/** A term as its leader process holds it: fenced writes match only the row of this epoch, holder and incarnation. */
export interface LeaderTerm extends HeldTerm, MemberIdentity {}

/** A shard just handed to its standby. */
export interface HandedOverTerm {
  readonly shard: number;
  /** The standby's epoch (the leader's + 1). */
  readonly epoch: number;
  /** The standby's URL, as its member row gives it. */
  readonly url: string;
}

/** Which process a member row or lease row belongs to. */
export interface MemberIdentity {
  /** `--server-id`: stable across restarts when the operator gives one. */
  readonly serverId: string;
  /**
   * A random id minted at every process start: two live processes with one `--server-id` (a
   * restarted pod whose predecessor still runs) never take each other's rows for their own.
   */
  readonly incarnation: string;
}

/** A member as it registers itself. */
export interface MemberInfo extends MemberIdentity {
  readonly url: string;
  /**
   * Whether it takes shards now: false during its join wait (a leader lease after it starts) and
   * once it stops. The others count only ready members in their shares, so a joiner never makes
   * them decline a released shard that nobody else could take yet.
   */
  readonly ready: boolean;
}

/** A live member as a heartbeat answers it. */
export interface LiveMember {
  readonly serverId: string;
  /** Its last heartbeat said it takes shards now (see {@link MemberInfo.ready}). */
  readonly ready: boolean;
  /**
   * The process that heartbeats for it (random per start). Default unknown (`undefined`: a list
   * not read from the database). A leader compares it with its standby's: another one means the
   * standby restarted and holds none of the log, even on a shard that sends nothing.
   */
  readonly incarnation?: string | null | undefined;
  /**
   * Its advertised URL, where its health is probed (a member is a balance target only while it
   * answers). Default unknown (`undefined`: a list not read from the database); such a member is
   * not probed and counts as answering.
   */
  readonly url?: string | undefined;
}

/** A member row as {@link Coordinator.readMembers} answers it. */
export interface MemberRow {
  readonly serverId: string;
  /** Its advertised URL. */
  readonly url: string;
  /** Its last heartbeat said it takes shards now. */
  readonly ready: boolean;
  /** Milliseconds since its last heartbeat, on the store's clock (so no server's clock matters). */
  readonly heartbeatAgeMs: number;
}

/** One shard's lease row. */
export interface ShardLease {
  readonly shard: number;
  /** The leading server's id; `null` when released or never held. */
  readonly holder: string | null;
  /** The leader's advertised URL, `null` with no holder. */
  readonly url: string | null;
  /** The leader id of the current term (the `leaderId` in its leases), `null` with no holder. */
  readonly leaderId: string | null;
  /**
   * The incarnation of the process that acquired the current term, `null` with no holder (or a
   * row written by a version before incarnations). A row is a process's own only when both its
   * holder and its incarnation are the process's.
   */
  readonly incarnation: string | null;
  /** Grows by one at every acquisition. */
  readonly epoch: number;
  /** Changes at every write of the row (acquire, renew, release): "seen unchanged" compares it. */
  readonly version: number;
  /** True when the row's expiry has passed on the store's clock (always true when released). */
  readonly expired: boolean;
  /** Acquisitions of this shard since the cluster was created. */
  readonly transitions: number;
  /** The standby the leader named (server id), `null` with none. */
  readonly standbyId: string | null;
  /** The named standby's incarnation: a restarted standby (another incarnation) is not it. */
  readonly standbyIncarnation: string | null;
  /** True while the leader records that its standby holds every grant it answered. */
  readonly inSync: boolean;
}

/** What a server claims a shard with. */
export interface LeaseClaim {
  readonly serverId: string;
  /** The claiming process's incarnation ({@link MemberIdentity.incarnation}), stored in the row. */
  readonly incarnation: string;
  readonly url: string;
  /** The leader id of the new term. */
  readonly leaderId: string;
  /** Expiry from now, on the store's clock. */
  readonly leaderLeaseMs: number;
  /**
   * This server's `leaseMs`, recorded (the longest seen) for servers of versions before
   * {@link validForMs} was recorded: they wait it out after any leader, as they always did.
   */
  readonly lockLeaseMs: number;
  /**
   * The `validForMs` of every lease this term will answer, recorded in the acquisition itself, so
   * before the term serves anything: the record is never below what a client of it was told.
   */
  readonly validForMs: number;
  /**
   * True for a standby taking the shard over with its replica: the acquisition then also requires
   * the row to keep {@link leaderId} (the replica's) and to name this process as its in-sync
   * standby, and it keeps `leader_id` (the table moves with the leadership). Default false: a new
   * `leaderId` and no standby condition.
   */
  readonly withState?: boolean | undefined;
}

/** A term just acquired. */
export interface AcquiredTerm {
  readonly shard: number;
  readonly epoch: number;
  /**
   * How long the new leader must wait before granting a lock (its rate margin comes on top): the
   * longest `validForMs` answered by an earlier leader of the shard whose leases a client may
   * still believe, that is, by every leader since the last one that waited its predecessors out
   * (0 when the shard was never led). After a term of an older version that recorded only its
   * lock lease, at least that lock lease.
   */
  readonly lockDelayMs: number;
}

/** A term a server holds: the shard and its epoch. */
export interface HeldTerm {
  readonly shard: number;
  readonly epoch: number;
}

/** A namespace's durable state. */
/** The namespaces whose bounds an adoption loads in its statement (see {@link Coordinator.adoptHandOver}). */
export interface BoundsToLoad {
  /** The namespaces (those the taker's replica holds); one listed twice is loaded once. */
  readonly namespaces: readonly string[];
  /** How far above its stored bound each is extended (the term's reserve block). */
  readonly block: number;
}

/** A term adopted from a hand-over, with the bounds its statement loaded. */
export interface AdoptedTerm extends AcquiredTerm {
  /** The namespaces' bounds loaded under the term's epoch (only those extended; none when not asked). */
  readonly bounds: readonly LoadedBound[];
  /**
   * The in-sync standby the adopted row still names (a balance move's former leader), `null` when
   * it names none: the taker's replication must resume to it before answering anything. Default
   * `null` (an implementation that clears the standby fields).
   */
  readonly standby?: MemberIdentity | null | undefined;
}

/** A namespace's bound as {@link Coordinator.loadBounds} found and extended it. */
export interface LoadedBound {
  /** The namespace whose bound was loaded. */
  readonly namespace: string;
  /** The bound as stored before the extension (0: never stored): the term's counter resumes above it. */
  readonly floor: number;
  /** The immutable timestamp stored before the extension, or `null`. */
  readonly immutable: number | null;
  /** The bound now stored under the term's epoch. */
  readonly to: number;
}

export interface StoredBound {
  /** Every number the namespace ever handed out is at or below it (0: none). */
  readonly bound: number;
  /** The immutable timestamp last recorded by a leader, or `null`. */
  readonly immutable: number | null;
  /** The epoch that last extended the bound (0: never). */
  readonly epoch: number;
}

/** One namespace's immutable timestamp to record, fenced by its shard's term. */
export interface ImmutableRecord {
  readonly namespace: string;
  readonly term: HeldTerm;
  readonly immutable: number;
}

/** The cluster's shard count when neither `--shards` nor an existing cluster says otherwise. */
export const DEFAULT_SHARDS = 64;

/** `--shards` differs from the count the cluster was created with. */
export class ShardCountMismatchError extends Error {
  override name = "ShardCountMismatchError";
  constructor(
    readonly stored: number,
    readonly requested: number,
  ) {
    super(
      `--shards ${requested} does not match this cluster, which was created with ${stored} shards; the shard count cannot change (a namespace's shard would move): start with --shards ${stored} or without --shards`,
    );
  }
}
