import type { Logger } from "pino";
import type { AcquiredTerm, HeldTerm, LeaseClaim, ShardLease } from "../coordinator.js";
import type { ShardTerm } from "../shard-term.js";
import type { ReplicaStore, ShardReplica } from "./replica-store.js";

/** A replica's table taken out of the store, to start a serving term with (same `leaderId`). */

/** A replica snapshot's images by namespace, as far as promotion reads them. */
type NamespaceImages = Record<string, unknown>;
export interface CarriedTable {
  /** The leader id its tokens carry: the new term keeps it, so every token stays valid. */
  readonly leaderId: string;
  /** The epoch of the term it replicated. */
  readonly epoch: number;
  /** Every namespace's image (`ShardTerm`'s `carried` option restores them). */
  readonly namespaces: Readonly<Record<string, unknown>>;
}

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
  /** Shards whose hand-over is being adopted (not orphans: never released meanwhile). */
  private readonly adopting = new Set<number>();

  constructor(private readonly options: ReplicaPromoterOptions) {}

  /**
   * True when a takeover's acquisition checks the row's standby conditions in its statement
   * (`LeaseClaim.withState`); false only under the test break, which promotes without them.
   */
  get fencesAcquisition(): boolean {
    return this.options.unsafeAnyReplica !== true;
  }

  /**
   * For an expired row this server is about to acquire: the replica to take it over with, taken
   * out of the store, or `null` (take it empty). The acquisition must then be `withState`, which
   * checks the same row conditions in the statement.
   */
  forTakeover(row: ShardLease): CarriedTable | null {
    const { serverId, incarnation, unsafeAnyReplica } = this.options;
    const replica = this.options.store.get(row.shard);
    if (replica === undefined) return null;
    if (unsafeAnyReplica !== true) {
      if (!row.inSync || row.standbyId !== serverId || row.standbyIncarnation !== incarnation) return null;
      if (replica.stream.epoch !== row.epoch || replica.stream.leaderId !== row.leaderId || replica.stream.standbyIncarnation !== incarnation) return null;
    }
    return this.take(row.shard, replica);
  }

  /**
   * For a row that names this process as holder although it leads no term of it: a hand-over to
   * this standby when its replica follows the term just before (`row.epoch - 1`, same
   * `leaderId`), else `null` (an orphan: released).
   */
  forHandOver(row: ShardLease): CarriedTable | null {
    const replica = this.options.store.get(row.shard);
    if (replica === undefined || row.holder !== this.options.serverId || row.incarnation !== this.options.incarnation) return null;
    if (replica.stream.epoch !== row.epoch - 1 || replica.stream.leaderId !== row.leaderId) return null;
    return this.take(row.shard, replica);
  }

  /**
   * Sort the rows that name this process without a term: those handed over to it are adopted
   * (`adopt` runs for each, in the background), the others are answered as orphans to release.
   * A shard whose adoption is in flight is neither.
   */
  adoptOrAnswer(orphans: readonly HeldTerm[], rows: readonly ShardLease[], adopt: (row: ShardLease, carried: CarriedTable) => Promise<void>): HeldTerm[] {
    const release: HeldTerm[] = [];
    for (const orphan of orphans) {
      if (this.adopting.has(orphan.shard)) continue;
      const row = rows[orphan.shard];
      const carried = row === undefined ? null : this.forHandOver(row);
      if (row === undefined || carried === null) {
        release.push(orphan);
        continue;
      }
      this.adopting.add(orphan.shard);
      void adopt(row, carried).finally(() => this.adopting.delete(orphan.shard));
    }
    return release;
  }

  /**
   * On a NOTIFY of `shard`: when this member holds a replica of it (and adopts it in no other
   * way now), the hand-over it would be, to try at once with the adoption's own fenced statement
   * (holder and incarnation this process, epoch the replica's + 1, `leader_id` the replica's:
   * the conditions {@link forHandOver} checks on a row read) without reading the rows first. The
   * shard counts as being adopted until {@link endNotifiedAdoption}, and its replica stays in the
   * store (pinned: a pass that reads the handed-over row does not drop it as of an old epoch)
   * until {@link takeHandedOver}. `null`: nothing to try (the pass decides as always).
   */
  beginNotifiedAdoption(shard: number): { readonly epoch: number; readonly leaderId: string } | null {
    // The test break promotes without the row's conditions: it keeps to the reading path.
    if (this.options.unsafeAnyReplica === true || this.adopting.has(shard)) return null;
    const replica = this.options.store.get(shard);
    if (replica === undefined) return null;
    this.adopting.add(shard);
    this.options.store.pin(shard);
    return { epoch: replica.stream.epoch + 1, leaderId: replica.stream.leaderId };
  }

  /** The namespaces `shard`'s replica holds, to load their bounds with the adoption (none without a replica). */
  replicaNamespaces(shard: number): string[] {
    return this.options.store.get(shard)?.sink.namespaceNames?.() ?? [];
  }

  /** The attempt {@link beginNotifiedAdoption} started is over (adopted or not). */
  endNotifiedAdoption(shard: number): void {
    this.options.store.unpin(shard);
    this.adopting.delete(shard);
  }

  /**
   * After the fenced adoption of a row handed over at `epoch` with `leaderId` matched: the replica
   * to serve, taken out of the store, when it still follows the term just before; else `null`
   * (the caller releases the row: it holds no table for it).
   */
  takeHandedOver(shard: number, epoch: number, leaderId: string): CarriedTable | null {
    const replica = this.options.store.get(shard);
    if (replica === undefined || replica.stream.epoch !== epoch - 1 || replica.stream.leaderId !== leaderId) return null;
    return this.take(shard, replica);
  }

  /** Log a promotion: shard, epoch, leaderId, what was carried; no lease-wait. */
  logPromotion(term: ShardTerm, kind: PromotionKind, fromEpoch: number): void {
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
        leaseWaitMs: 0,
      },
      "standby promoted",
    );
  }

  private take(shard: number, replica: ShardReplica): CarriedTable | null {
    this.options.store.take(shard);
    try {
      const snapshot = replica.sink.snapshot?.() as { namespaces?: NamespaceImages | undefined } | undefined;
      if (snapshot?.namespaces === undefined) return null;
      return { leaderId: replica.stream.leaderId, epoch: replica.stream.epoch, namespaces: snapshot.namespaces };
    } catch (err) {
      this.options.logger.warn({ shard, err }, "the replica could not be exported; the shard is taken with an empty table");
      return null;
    } finally {
      replica.sink.dispose?.();
    }
  }
}
