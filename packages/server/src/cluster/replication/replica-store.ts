import type { HeldBackPlaces } from "../held-back-places.js";
import { ReplicationRefusal, type ReplicationAck, type ReplicationMessage, type StreamIdentity } from "./replication-wire.js";

/** Where a standby's replica of a shard lives: the engine's table restored and fed, in order. */
export interface ReplicaSink {
  /** Load a snapshot into this (fresh) sink. Throws when it cannot: the sink is then discarded. */
  restore(snapshot: unknown): void;
  /** Apply one log entry, in sequence order. Throws when it cannot: the replica is then dropped. */
  apply(entry: unknown, seq: number): void;
  /**
   * The replica's whole table as a shard snapshot (`{ namespaces: { <namespace>: <image> } }`), for
   * a promotion to start a serving table from. Default: none (such a sink never promotes).
   */
  snapshot?(): unknown;
  /**
   * The namespaces the replica holds (a promotion carries them), to load their timestamp bounds
   * with the adoption's statement. Default: none known (they load after it, before serving).
   */
  namespaceNames?(): string[];
  /**
   * How long from now a table promoted from the replica must hold lock grants back: what its
   * leader's lease-wait had left when the snapshot was taken, counted from its restore. Default 0.
   */
  leaseWaitLeftMs?(): number;
  /** The held-back places the leader's hand-over entry carried, in line order (promote-replica.ts passes them on). Default: none. */
  heldBackPlaces?(): HeldBackPlaces;
  /**
   * True while the last entry applied is the leader's hand-over entry (replicated-tables.ts): the
   * leader is handing the shard to this standby. Default: never.
   */
  handedOver?(): boolean;
  /** Release what the sink holds once it is replaced or dropped. Default: nothing. */
  dispose?(): void;
}

/** One shard's replica on this standby. */
export interface ShardReplica {
  /** The stream it follows: the leader's term (epoch, incarnation, leaderId) and the snapshot's stream id. */
  readonly stream: StreamIdentity;
  /** Every entry up to this one is applied (the snapshot's `seq` at first). */
  readonly appliedSeq: number;
  readonly sink: ReplicaSink;
}

/** What a {@link ReplicaStore} is made with. */
export interface ReplicaStoreOptions {
  /** This process's incarnation: a message naming another one (sent to a predecessor) is refused. */
  readonly incarnation: string;
  /** The cluster's shard count, `null` before this server joined (then every message is refused). */
  readonly shards: () => number | null;
  /** The epoch of `shard`'s lease row as this server last read it, `null` when unknown. */
  readonly rowEpoch: (shard: number) => number | null;
  /** A fresh sink for a snapshot of `stream` (a table serving under `stream.leaderId`). */
  readonly createSink: (stream: StreamIdentity) => ReplicaSink;
  /**
   * Hears a shard whose replica just applied its leader's hand-over entry (its sink's
   * `handedOver`), in the turn the acknowledgement is answered: the row may move to this member
   * any moment now (runtime-hand-overs.ts tries the adoption on its own). Default: nothing.
   */
  readonly onHandOverEntry?: ((shard: number) => void) | undefined;
}

/**
 * The standby side of replication: one replica per shard, each following one stream. A snapshot
 * starts a stream (replacing an older replica); entries apply in order on the stream whose
 * snapshot is held, those already applied are skipped (a re-send), and the answer is the highest
 * entry held (cumulative). Refused with a clear error, changing nothing:
 * - a message for another incarnation of this server (it restarted: it holds none of the old log);
 * - a message of an epoch older than the replica's or than the shard's row (a deposed leader);
 * - entries of a stream whose snapshot is not held, or that leave a gap;
 * - a snapshot of the replica's own term older than what it already applied (a replayed request).
 */
export class ReplicaStore {
  private readonly replicas = new Map<number, ShardReplica>();
  /** Shards whose replica {@link drop} leaves alone for now (see {@link pin}). */
  private readonly pinned = new Set<number>();

  constructor(private readonly options: ReplicaStoreOptions) {}

  /** The replica of `shard`, if this server holds one. */
  get(shard: number): ShardReplica | undefined {
    return this.replicas.get(shard);
  }

  /** Every shard this server holds a replica of. */
  shards(): number[] {
    return [...this.replicas.keys()];
  }

  /**
   * Forget the replica of `shard` (this server is no longer its standby, or it took the shard
   * over); nothing while it is pinned (see {@link pin}).
   */
  drop(shard: number): void {
    if (!this.pinned.has(shard)) this.discard(shard);
  }

  /**
   * Keep `shard`'s replica from {@link drop} until {@link unpin}: an adoption tried on a NOTIFY
   * (promote-replica.ts) sends its fenced statement first and takes the replica only once it
   * matched, and a pass reading the handed-over row meanwhile (its epoch past the replica's) must
   * not drop the very table the adoption is about to serve. A replica whose entries diverged is
   * still dropped (it can never be served), and only a row naming this process with the
   * replica's term promotes it, pinned or not.
   */
  pin(shard: number): void {
    this.pinned.add(shard);
  }

  /** End {@link pin}: a later {@link drop} forgets the replica again. */
  unpin(shard: number): void {
    this.pinned.delete(shard);
  }

  /** Tell {@link ReplicaStoreOptions.onHandOverEntry}; what it throws never refuses the message. */
  private heardHandOver(shard: number): void {
    try {
      this.options.onHandOverEntry?.(shard);
    } catch {
      // The acknowledgement stands: the NOTIFY and the passes still adopt the row.
    }
  }

  private discard(shard: number): void {
    this.replicas.get(shard)?.sink.dispose?.();
    this.replicas.delete(shard);
  }

  /**
   * Remove the replica of `shard` and hand it to the caller without disposing of it (a promotion
   * takes its table); later messages of its stream are refused as lacking a snapshot.
   */
  take(shard: number): ShardReplica | undefined {
    const held = this.replicas.get(shard);
    this.replicas.delete(shard);
    return held;
  }

  /** Apply `message` (already authenticated and parsed); answers the acknowledgement or throws a {@link ReplicationRefusal}. */
  receive(message: ReplicationMessage): ReplicationAck {
    const { stream } = message;
    const { shard, epoch } = stream;
    const shards = this.options.shards();
    if (shards === null) throw new ReplicationRefusal("NEEDS_SNAPSHOT", "this server has not joined the cluster yet; retry", { shard });
    if (shard >= shards) throw new ReplicationRefusal("INVALID_ARGUMENT", `replication message: shard ${shard} does not exist (the cluster has ${shards})`, { path: "stream.shard" });
    if (stream.standbyIncarnation !== this.options.incarnation) {
      throw new ReplicationRefusal(
        "STANDBY_RESTARTED",
        `shard ${shard}: this server is incarnation ${this.options.incarnation}, not the standby incarnation ${stream.standbyIncarnation} the leader named; it restarted and holds none of that log: name it again and send a snapshot`,
        { shard, incarnation: this.options.incarnation },
      );
    }
    const rowEpoch = this.options.rowEpoch(shard);
    if (rowEpoch !== null && rowEpoch > epoch) {
      throw new ReplicationRefusal("STALE_EPOCH", `shard ${shard}: the leader's epoch ${epoch} is stale; the shard's row is at epoch ${rowEpoch}`, { shard, epoch: rowEpoch });
    }
    const held = this.replicas.get(shard);
    if (held !== undefined && held.stream.epoch > epoch) {
      throw new ReplicationRefusal("STALE_EPOCH", `shard ${shard}: the leader's epoch ${epoch} is stale; this standby holds a replica of epoch ${held.stream.epoch}`, {
        shard,
        epoch: held.stream.epoch,
      });
    }
    const sameTerm = held !== undefined && held.stream.epoch === epoch;
    if (sameTerm && held.stream.leaderIncarnation !== stream.leaderIncarnation) {
      throw new ReplicationRefusal("STALE_EPOCH", `shard ${shard}: epoch ${epoch} is led by incarnation ${held.stream.leaderIncarnation}, not ${stream.leaderIncarnation}`, { shard, epoch });
    }
    if (message.kind === "snapshot") {
      if (sameTerm && message.seq < held.appliedSeq) {
        throw new ReplicationRefusal("STALE_SNAPSHOT", `shard ${shard}: a snapshot at ${message.seq} is older than the ${held.appliedSeq} entries this replica applied`, {
          shard,
          appliedSeq: held.appliedSeq,
        });
      }
      const sink = this.options.createSink(stream);
      try {
        sink.restore(message.snapshot);
      } catch (err) {
        sink.dispose?.();
        throw new ReplicationRefusal("INVALID_ARGUMENT", `shard ${shard}: the snapshot could not be restored (${err instanceof Error ? err.message : String(err)})`, { path: "snapshot" });
      }
      held?.sink.dispose?.();
      this.replicas.set(shard, { stream, appliedSeq: message.seq, sink });
      return { ackedSeq: message.seq };
    }
    if (!sameTerm || held.stream.streamId !== stream.streamId) {
      throw new ReplicationRefusal("NEEDS_SNAPSHOT", `shard ${shard}: this standby holds no snapshot of stream ${stream.streamId}; send one first`, { shard });
    }
    if (message.fromSeq > held.appliedSeq) {
      throw new ReplicationRefusal("NEEDS_SNAPSHOT", `shard ${shard}: entries from ${message.fromSeq + 1} leave a gap after ${held.appliedSeq}, the last applied`, {
        shard,
        appliedSeq: held.appliedSeq,
      });
    }
    let applied = held.appliedSeq;
    const { entries, fromSeq } = message;
    try {
      // Entries already held (a re-send) are skipped: start at the first one after them.
      for (let i = Math.max(0, applied - fromSeq); i < entries.length; i++) {
        held.sink.apply(entries[i], fromSeq + 1 + i);
        applied = fromSeq + 1 + i;
      }
    } catch (err) {
      // A table that took only part of an entry matches neither side any more: it needs a snapshot.
      this.discard(shard);
      throw new ReplicationRefusal("REPLICA_DIVERGED", `shard ${shard}: entry ${applied + 1} could not be applied (${err instanceof Error ? err.message : String(err)}); the replica was dropped`, {
        shard,
      });
    }
    if (applied !== held.appliedSeq) this.replicas.set(shard, { stream: held.stream, sink: held.sink, appliedSeq: applied });
    if (applied > held.appliedSeq && held.sink.handedOver?.() === true) this.heardHandOver(shard);
    return { ackedSeq: applied };
  }
}
