import type { ReplicationClock } from "./replication-clock.js";
import type { ReplicationLog } from "./replication-log.js";
import { ReplicationRefusal, type ReplicationAck, type ReplicationMessage, type StreamIdentity } from "./replication-wire.js";

/** How messages reach a standby. */
export interface ReplicationTransport {
  /**
   * Send one message and answer the standby's acknowledgement. Rejects with a
   * {@link ReplicationRefusal} when the standby refused it (the stream is over), with any other
   * error when the outcome is unknown (the connection failed: the sender re-sends).
   */
  send(message: ReplicationMessage): Promise<ReplicationAck>;
  /** Close the connection. */
  close(): Promise<void>;
}

/** What a {@link ReplicationSender} is made with. */
export interface ReplicationSenderOptions<E> {
  readonly log: ReplicationLog<E>;
  readonly transport: ReplicationTransport;
  readonly stream: StreamIdentity;
  /**
   * The shard's table as of `seq` (taken when `log.startRetaining()` answered `seq`): sent first,
   * then the log after it.
   */
  readonly snapshot: { readonly seq: number; readonly payload: unknown };
  readonly clock: ReplicationClock;
  /**
   * Pause before re-sending after a failed exchange. Default 100 ms: a restarting standby is not
   * hammered, and the lateness watchdog (a third of the leader lease) decides when to give up.
   */
  readonly retryMs?: number | undefined;
  /** Most entries in one message. Default 5,000: a backlog after a pause travels in bounded bodies. */
  readonly maxBatch?: number | undefined;
  /**
   * Most messages in flight at once. Default 64: each event-loop turn's entries leave at the end of
   * that turn without waiting for an earlier message's acknowledgement (a grant's answer waits one
   * round trip, not two), while a standby that stops answering holds a bounded number of messages
   * (the lateness watchdog gives up on it after a third of the leader lease anyway). 1 restores a
   * single message in flight, each carrying everything that accumulated meanwhile.
   */
  readonly maxInFlight?: number | undefined;
  /**
   * Passes what the standby acknowledged (cumulative) on. Default: the log's own acknowledgement
   * ({@link ReplicationLog.acknowledge}); a leader streaming to two standbys at once (a standby
   * move) acknowledges the log only up to what both hold.
   */
  readonly acknowledge?: ((ackedSeq: number) => void) | undefined;
  /** Hears each acknowledgement with the round trip of its message (ms). Default: nothing. */
  readonly onAck?: ((ackedSeq: number, roundTripMs: number) => void) | undefined;
  /** The standby refused the stream (it is over: a re-sync starts a new one). */
  readonly onRefused: (refusal: ReplicationRefusal) => void;
  /** Hears each failed exchange (re-sent after `retryMs`). Default: nothing. */
  readonly onError?: ((err: unknown) => void) | undefined;
}

/**
 * One stream to one standby: the snapshot first (alone), then the log from the snapshot's
 * sequence, each turn's entries in their own message as soon as the turn ends, up to
 * `maxInFlight` messages in flight (the transport delivers them in order, and acknowledgements are
 * cumulative), each acknowledgement passed to the log. So a turn's grants never wait behind an
 * earlier message's round trip (a tryUnlock's releases, say). After a failed exchange it re-sends
 * from the last acknowledgement (the standby skips what it holds), the snapshot too when that was
 * never acknowledged; answers to messages sent before the failure are then ignored.
 */
export class ReplicationSender<E> {
  /** The standby holds the stream up to here (the snapshot's `seq` once it acknowledged it). */
  private acked: number | null = null;
  private sentUpTo = 0;
  /** The highest sequence number ever sent: a standby may hold up to it, even after a failed exchange. */
  private highestSent = 0;
  private inFlight = 0;
  /** Between a failure and its retry: nothing is sent (a send now would race the retry's). */
  private pausing = false;
  /** Bumped at each failure: answers to messages of an earlier generation are ignored. */
  private generation = 0;
  private stopped = false;
  /**
   * Since when a message has been sent that nothing the standby answered followed (`null`: every
   * message sent was answered): failed exchanges and re-sends keep it, an answer resets it.
   */
  private unansweredSince: number | null = null;
  /** Answers heard from the standby so far. */
  private heard = 0;
  private readonly unsubscribe: () => void;

  constructor(private readonly options: ReplicationSenderOptions<E>) {
    this.unsubscribe = options.log.onDue(() => this.pump());
  }

  /** Begin sending. */
  start(): void {
    this.pump();
  }

  /** Stop: nothing more is sent, a late answer is ignored, the connection is closed. Idempotent. */
  stop(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.stopped = true;
    this.unsubscribe();
    return this.options.transport.close();
  }

  /**
   * How long the standby has left a message unanswered (0 when nothing is outstanding): what tells
   * a dead or cut-off standby apart on a shard that sends nothing, see {@link probe}.
   */
  unansweredForMs(): number {
    return this.unansweredSince === null ? 0 : this.options.clock.now() - this.unansweredSince;
  }

  /** How many answers the standby has sent so far: one more after a moment proves it still answered then (within a round trip). */
  get answers(): number {
    return this.heard;
  }

  /**
   * Ask the standby for its acknowledgement with an empty message (it answers what it holds), when
   * nothing is in flight, nothing is being retried and the snapshot was acknowledged: an idle
   * shard's stream otherwise never notices that its standby died (SIGKILL, a lost host), and the
   * row would name a dead standby in sync. Called every third of the leader lease.
   */
  probe(): void {
    if (this.stopped || this.pausing || this.inFlight > 0 || this.acked === null) return;
    if (this.options.log.since(Math.max(this.acked, this.sentUpTo), 1).entries.length > 0) return this.pump();
    this.send({ kind: "entries", stream: this.options.stream, fromSeq: this.acked, entries: [] }, this.acked, this.highestSent);
  }

  /** True once stopped (by {@link stop} or a refusal). */
  get isStopped(): boolean {
    return this.stopped;
  }

  private pump(): void {
    if (this.stopped || this.pausing) return;
    const { stream, snapshot, log } = this.options;
    if (this.acked === null) {
      if (this.inFlight === 0) this.send({ kind: "snapshot", stream, seq: snapshot.seq, snapshot: snapshot.payload }, snapshot.seq);
      return;
    }
    const maxInFlight = this.options.maxInFlight ?? 64;
    while (this.inFlight < maxInFlight) {
      const batch = log.since(Math.max(this.acked, this.sentUpTo), this.options.maxBatch ?? 5_000);
      if (batch.entries.length === 0) return;
      this.send({ kind: "entries", stream, fromSeq: batch.fromSeq, entries: batch.entries }, batch.fromSeq + batch.entries.length);
    }
  }

  /** Send `message`, which holds the log up to `upTo`; an acknowledgement beyond `mayAck` (the highest ever sent, for a probe) is a divergence. */
  private send(message: ReplicationMessage, upTo: number, mayAck = upTo): void {
    this.inFlight++;
    this.sentUpTo = upTo;
    this.highestSent = Math.max(this.highestSent, upTo);
    const sentAt = this.options.clock.now();
    this.unansweredSince ??= sentAt;
    const generation = this.generation;
    this.options.transport.send(message).then(
      (ack) => this.answered(ack, mayAck, sentAt, generation),
      (err: unknown) => this.failed(err, generation),
    );
  }

  private answered(ack: ReplicationAck, upTo: number, sentAt: number, generation: number): void {
    if (this.stopped || generation !== this.generation) return;
    this.inFlight--;
    this.heard++;
    // Heard from: what is still in flight counts from now.
    this.unansweredSince = this.inFlight > 0 ? this.options.clock.now() : null;
    // Cumulative: an answer may cover a later message that overtook this one (messages in flight
    // at once may cross on the way), so only beyond everything ever sent is a divergence. A
    // snapshot's answer is bounded by the snapshot itself (it starts the stream).
    const mayAck = this.acked === null ? upTo : Math.max(upTo, this.highestSent);
    if (!Number.isSafeInteger(ack.ackedSeq) || ack.ackedSeq > mayAck) {
      this.refuse(new ReplicationRefusal("REPLICA_DIVERGED", `the standby acknowledged ${ack.ackedSeq}, beyond what was sent (${mayAck})`));
      return;
    }
    if (this.acked === null && ack.ackedSeq < this.options.snapshot.seq) {
      this.refuse(new ReplicationRefusal("REPLICA_DIVERGED", `the standby acknowledged ${ack.ackedSeq} for a snapshot at ${this.options.snapshot.seq}`));
      return;
    }
    this.acked = Math.max(this.acked ?? 0, ack.ackedSeq);
    if (this.options.acknowledge !== undefined) this.options.acknowledge(this.acked);
    else if (this.acked > this.options.log.ackedSeq) this.options.log.acknowledge(this.acked);
    this.options.onAck?.(this.acked, this.options.clock.now() - sentAt);
    this.pump();
  }

  private failed(err: unknown, generation: number): void {
    if (this.stopped || generation !== this.generation) return;
    if (err instanceof ReplicationRefusal) return this.refuse(err);
    this.options.onError?.(err);
    // Unknown outcome: re-send from what the standby acknowledged (it skips what it holds); the
    // answers still due for earlier messages no longer count.
    this.generation++;
    this.sentUpTo = this.acked ?? 0;
    this.inFlight = 0;
    this.pausing = true;
    this.options.clock.setTimer(() => {
      this.pausing = false;
      this.pump();
    }, this.options.retryMs ?? 100);
  }

  private refuse(refusal: ReplicationRefusal): void {
    void this.stop();
    this.options.onRefused(refusal);
  }
}
