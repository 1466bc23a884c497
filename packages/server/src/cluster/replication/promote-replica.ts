import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import type { HeldBackPlaces } from "../held-back-places.js";
import type { AcquiredTerm, HeldTerm, LeaseClaim, ShardLease } from "../coordinator.js";
import type { ShardTerm } from "../shard-term.js";
import type { ReplicaStore, ShardReplica } from "./replica-store.js";

/** A replica snapshot's images by namespace, as far as promotion reads them. */
type NamespaceImages = Record<string, unknown>;

/** A replica's table taken out of the store, to start a serving term with (same `leaderId`). */
export interface CarriedTable {
  /** The leader id its tokens carry: the new term keeps it, so every token stays valid. */
  readonly leaderId: string;
  /** The epoch of the term it replicated. */
  readonly epoch: number;
  /** Every namespace's image (`ShardTerm`'s `carried` option restores them). */
  readonly namespaces: Readonly<Record<string, unknown>>;
  /**
   * How long the promoted table must still hold lock grants back (ms): the rest of the lease-wait
   * of the term it replicated, which had taken the shard empty while an earlier leader's leases
   * could still run (0: none).
   */
  readonly leaseWaitLeftMs: number;
  /** The places of the requests the leader still held back in its lease-wait when it handed over (its hand-over entry carried them). */
  readonly heldBack: HeldBackPlaces;
}

/**
 * A replica a claiming statement (a takeover, an adoption of a hand-over) may promote. It stays in
 * the store, pinned (no stale-replica drop), until the statement's outcome is known
 * ({@link ReplicaPromoter.settle}): only a statement that matched takes it out.
 */
export interface PromotionCandidate {
  readonly shard: number;
  /** The leader id the claim keeps: the replica's. */
  readonly leaderId: string;
  /** The epoch of the term the replica follows (a hand-over's row is one above it). */
  readonly epoch: number;
}

/** What became of a claiming statement: it matched, matched nothing, or failed (outcome unknown: it may have committed). */
export type ClaimOutcome = "matched" | "unmatched" | "unknown";

/** How a standby came to lead the shard. */
export type PromotionKind = "takeover" | "hand-over";

/** What a {@link ReplicaPromoter} is made with. */
export interface ReplicaPromoterOptions {
  /** This member's replicas (its standby side). */
  readonly store: ReplicaStore;
  readonly serverId: string;
  /** This process's incarnation: only a row naming it (not a predecessor with the same server id) counts. */
  readonly incarnation: string;
  readonly logger: Logger;
  /**
   * TEST ONLY (`LEASEHOLD_TEST_BREAK=drop-replica-on-unknown`): a claim whose statement failed
   * drops the replica at once, as if the statement had not committed, so a negative control can
   * show that a row it did commit is then released as an orphan with every lock. Default false.
   */
  readonly dropReplicaOnUnknown?: boolean | undefined;
  /**
   * TEST ONLY (`LEASEHOLD_TEST_BREAK=former-replaces-taker-stream`): {@link ReplicaPromoter.keepFormerTable}
   * replaces the taker's own stream of the new epoch when it already reached this store. Default false.
   */
  readonly formerReplacesStream?: boolean | undefined;
  /**
   * TEST ONLY (`LEASEHOLD_TEST_BREAK=promote-any-replica`): promote whatever replica this member
   * holds of the shard, whatever the row says of its standby, incarnation, epoch and leaderId (and
   * keep replicas of superseded epochs, see `LeaderSide`), so a negative control can show that a
   * stale table promoted resurrects void tokens. Default false.
   */
  readonly unsafeAnyReplica?: boolean | undefined;
}

/** Starts a term on a promoted table: the runtime's own term set-up. */
export type StartCarriedTerm = (row: ShardLease, got: AcquiredTerm, claim: LeaseClaim, sentAt: number, sentWall: number, carried: CarriedTable) => void;

/**
 * The rule of a standby's takeover with state (DESIGN.md "Locks that outlive their leader"): a
 * member promotes its replica of a shard only when the row names this very process (server id and
 * incarnation) as its in-sync standby and the replica follows the row's term (epoch and
 * `leaderId`), or, after a hand-over, when the row was moved to this process from the term the
 * replica follows. A restarted standby (another incarnation: it holds no replica) or a replica of
 * another epoch never promotes; the member then takes the shard with an empty table and the
 * lease-wait, as always.
 */
export class ReplicaPromoter {
  /** Shards with a claiming statement in flight (not orphans: never released meanwhile), and its candidate. */
  private readonly adopting = new Map<number, PromotionCandidate>();
  /**
   * Shards whose claiming statement failed: it may have committed, so the replica stays pinned
   * until the rows are read again ({@link adoptOrAnswer}), which tells the two apart: a row
   * naming this process at the new epoch is adopted with the replica, else the pin is lifted.
   */
  private readonly unknown = new Set<number>();
  /** The stream of each replica kept by {@link keepFormerTable}: never a hand-over to this member, so no NOTIFY adoption is tried with it. */
  private readonly formerStreams = new Map<number, string>();

  constructor(private readonly options: ReplicaPromoterOptions) {}

  /**
   * True when a takeover's acquisition checks the row's standby conditions in its statement
   * (`LeaseClaim.withState`); false only under the test break, which promotes without them.
   */
  get fencesAcquisition(): boolean {
    return this.options.unsafeAnyReplica !== true;
  }

  /** True while a claiming statement of `shard` is in flight: the shard is neither acquired nor released meanwhile. */
  busy(shard: number): boolean {
    return this.adopting.has(shard);
  }

  /**
   * For an expired row this server is about to acquire: the replica to take it over with, as a
   * candidate (settle it with the acquisition's outcome), or `null` (take it empty). The
   * acquisition must then be `withState`, which checks the same row conditions in the statement.
   */
  forTakeover(row: ShardLease): PromotionCandidate | null {
    const { serverId, incarnation, unsafeAnyReplica } = this.options;
    const replica = this.options.store.get(row.shard);
    if (replica === undefined || this.adopting.has(row.shard)) return null;
    if (unsafeAnyReplica !== true) {
      if (!row.inSync || row.standbyId !== serverId || row.standbyIncarnation !== incarnation) return null;
      if (replica.stream.epoch !== row.epoch || replica.stream.leaderId !== row.leaderId || replica.stream.standbyIncarnation !== incarnation) return null;
    }
    return this.begin(row.shard, replica);
  }

  /**
   * For a row that names this process as holder although it leads no term of it: a hand-over to
   * this standby (or a takeover of its own whose statement's answer was lost) when its replica
   * follows the term just before (`row.epoch - 1`, same `leaderId`), as a candidate to settle with
   * the adoption's outcome; else `null` (an orphan: released).
   */
  forHandOver(row: ShardLease): PromotionCandidate | null {
    const replica = this.options.store.get(row.shard);
    if (replica === undefined || this.adopting.has(row.shard) || row.holder !== this.options.serverId || row.incarnation !== this.options.incarnation) return null;
    if (replica.stream.epoch !== row.epoch - 1 || replica.stream.leaderId !== row.leaderId) return null;
    return this.begin(row.shard, replica);
  }

  /**
   * Sort the rows that name this process without a term: those handed over to it are adopted
   * (`adopt` runs for each, in the background, and settles its candidate), the others are
   * answered as orphans to release. A shard whose claim is in flight is neither. A shard whose
   * last claim's outcome was unknown is settled by this read: adopted when its row names this
   * process (the statement committed), else its replica is no longer pinned.
   */
  adoptOrAnswer(orphans: readonly HeldTerm[], rows: readonly ShardLease[], adopt: (row: ShardLease, candidate: PromotionCandidate) => Promise<void>): HeldTerm[] {
    const orphaned = new Set(orphans.map((o) => o.shard));
    for (const shard of this.unknown) if (!orphaned.has(shard) && !this.adopting.has(shard)) this.options.store.unpin(shard);
    const wasUnknown = new Set(this.unknown);
    this.unknown.clear();
    const release: HeldTerm[] = [];
    for (const orphan of orphans) {
      if (this.adopting.has(orphan.shard)) continue;
      const row = rows[orphan.shard];
      const candidate = row === undefined ? null : this.forHandOver(row);
      if (row === undefined || candidate === null) {
        if (wasUnknown.has(orphan.shard)) this.options.store.unpin(orphan.shard);
        release.push(orphan);
        continue;
      }
      // The adoption settles its candidate; an adoption that threw before doing so leaves it unknown.
      void adopt(row, candidate).finally(() => this.settle(candidate, "unknown"));
    }
    return release;
  }

  /**
   * On a NOTIFY of `shard`: when this member holds a replica of it (and adopts it in no other
   * way now), the hand-over it would be, to try at once with the adoption's own fenced statement
   * (holder and incarnation this process, epoch the replica's + 1, `leader_id` the replica's:
   * the conditions {@link forHandOver} checks on a row read) without reading the rows first.
   * `null`: nothing to try (the pass decides as always). Settle it with the statement's outcome.
   */
  beginNotifiedAdoption(shard: number): PromotionCandidate | null {
    // The test break promotes without the row's conditions: it keeps to the reading path.
    if (this.options.unsafeAnyReplica === true || this.adopting.has(shard)) return null;
    const replica = this.options.store.get(shard);
    if (replica === undefined || this.formerStreams.get(shard) === replica.stream.streamId) return null;
    return this.begin(shard, replica);
  }

  /**
   * True while this member holds a replica of `shard` whose last entry applied is its leader's
   * hand-over entry (not a former leader's kept table): a row move to this member may be pending,
   * and {@link beginNotifiedAdoption} is worth trying without a NOTIFY (adopt-after-ack.ts).
   */
  awaitsHandOver(shard: number): boolean {
    const replica = this.options.store.get(shard);
    return replica !== undefined && replica.sink.handedOver?.() === true && this.formerStreams.get(shard) !== replica.stream.streamId;
  }

  /** The namespaces `shard`'s replica holds, to load their bounds with the adoption (none without a replica). */
  replicaNamespaces(shard: number): string[] {
    return this.options.store.get(shard)?.sink.namespaceNames?.() ?? [];
  }

  /**
   * The claiming statement of `candidate` is over. Matched: the replica to serve, taken out of
   * the store, when it still follows the candidate's term (else `null`: the caller releases the
   * row, it holds no table for it). Matched nothing: `null`, the replica stays (this member may
   * still be the standby). Unknown (the statement failed, and may have committed): `null`, and the
   * replica stays pinned until the rows are read again ({@link adoptOrAnswer}); TEST ONLY with
   * `dropReplicaOnUnknown` it is dropped at once. Settling twice changes nothing.
   */
  settle(candidate: PromotionCandidate, outcome: ClaimOutcome): CarriedTable | null {
    const { shard } = candidate;
    if (this.adopting.get(shard) !== candidate) return null;
    this.adopting.delete(shard);
    const drop = outcome === "unknown" && this.options.dropReplicaOnUnknown === true;
    if (outcome === "unknown" && !drop) {
      this.unknown.add(shard);
      return null;
    }
    this.options.store.unpin(shard);
    if (outcome === "unmatched") return null;
    const replica = this.options.store.get(shard);
    if (replica === undefined || replica.stream.epoch !== candidate.epoch || replica.stream.leaderId !== candidate.leaderId) return null;
    const carried = this.take(shard, replica);
    return drop ? null : carried;
  }

  /**
   * Keep the table this member just handed over for balance as its replica of the new epoch
   * (`stream`: the taker's epoch, the shard's `leaderId`, the taker's incarnation), as if the taker
   * had sent it: the moved row names this process as that epoch's in-sync standby until the taker
   * adopts, so a taker that never adopts leaves the shard to this member's takeover with the table
   * ({@link forTakeover}). At sequence 0, so the taker's own first snapshot (same epoch, same
   * leader incarnation) replaces it: the taker's adoption keeps this process named in sync and
   * resumes its replication to it before answering anything (`ShardReplication.resume`), so it
   * holds every grant the taker answered, or the taker records it not in sync first. False (and
   * logged) when the store refused it.
   *
   * When the taker's own stream of that epoch (or a later one) already reached this store (it
   * adopted and resumed its replication here before this member heard its statement's answer:
   * its outcome unknown, or answered late), that replica is the fresher one and is kept as it is:
   * replacing it with the table as handed over, under another stream identity, would make the
   * taker's next entries refused (`NEEDS_SNAPSHOT`), so a stop of the taker would find its standby
   * not in sync and release the shard without its locks (found by `pnpm sim`, seed 51862). True
   * then: this member holds the table of that epoch. TEST ONLY: `formerReplacesStream` (the
   * `former-replaces-taker-stream` break) replaces it anyway.
   */
  keepFormerTable(stream: { readonly shard: number; readonly epoch: number; readonly leaderId: string; readonly leaderIncarnation: string }, snapshot: unknown): boolean {
    const held = this.options.store.get(stream.shard);
    const takers =
      held !== undefined &&
      this.formerStreams.get(stream.shard) !== held.stream.streamId &&
      held.stream.leaderId === stream.leaderId &&
      (held.stream.epoch > stream.epoch || (held.stream.epoch === stream.epoch && held.stream.leaderIncarnation === stream.leaderIncarnation));
    if (takers && this.options.formerReplacesStream !== true) return true;
    try {
      const streamId = randomUUID();
      this.options.store.receive({ kind: "snapshot", stream: { ...stream, standbyIncarnation: this.options.incarnation, streamId }, seq: 0, snapshot });
      this.formerStreams.set(stream.shard, streamId);
      return true;
    } catch (err) {
      this.options.logger.warn({ shard: stream.shard, epoch: stream.epoch, err }, "could not keep the table handed over as a replica: if the taker never adopts it, the shard is taken without its locks");
      return false;
    }
  }

  /** Log a promotion: shard, epoch, leaderId, what was carried, the rest of a lease-wait it carried (`leaseWaitMs`). */
  logPromotion(term: ShardTerm, kind: PromotionKind, fromEpoch: number, leaseWaitMs = 0): void {
    const carried = term.carried;
    this.options.logger.info(
      {
        shard: term.shard,
        epoch: term.epoch,
        fromEpoch,
        leaderId: term.leaderId,
        kind,
        locksCarried: carried?.tokens ?? 0,
        waitersCarried: carried?.waiters ?? 0,
        namespaces: carried?.namespaces ?? 0,
        leaseWaitMs,
      },
      "standby promoted",
    );
  }

  /** A claim of `shard` begins: its replica stays in the store, pinned, until {@link settle}. */
  private begin(shard: number, replica: ShardReplica): PromotionCandidate {
    const candidate: PromotionCandidate = { shard, leaderId: replica.stream.leaderId, epoch: replica.stream.epoch };
    this.adopting.set(shard, candidate);
    this.options.store.pin(shard);
    return candidate;
  }

  private take(shard: number, replica: ShardReplica): CarriedTable | null {
    this.options.store.take(shard);
    try {
      const snapshot = replica.sink.snapshot?.() as { namespaces?: NamespaceImages | undefined } | undefined;
      if (snapshot?.namespaces === undefined) return null;
      return { leaderId: replica.stream.leaderId, epoch: replica.stream.epoch, namespaces: snapshot.namespaces, leaseWaitLeftMs: replica.sink.leaseWaitLeftMs?.() ?? 0, heldBack: replica.sink.heldBackPlaces?.() ?? {} };
    } catch (err) {
      this.options.logger.warn({ shard, err }, "the replica could not be exported; the shard is taken with an empty table");
      return null;
    } finally {
      replica.sink.dispose?.();
    }
  }
}
