import { WaitingLockHandle } from "../../service/waiting-lock-handle.js";
import { unavailable } from "../cluster-errors.js";
import { ReplicationFencedError } from "./sync-rule.js";
import type { TermReplicator } from "./term-replicator.js";

/** A deposed leader's held answer becomes a 503 the client re-sends to the new leader, never a 500. */
function asUnavailable(err: unknown): never {
  if (err instanceof ReplicationFencedError) throw unavailable("this server no longer leads the namespace's shard; retry", 100);
  throw err;
}

/** What {@link RevealedAnswers} is made with: only test breaks, all off by default. */
export interface RevealedAnswersOptions {
  /**
   * TEST ONLY (`LEASEHOLD_TEST_BREAK=retry-before-ack`): an answer waits only for the entries its
   * own operation appended, as before issue 29: a retry with the same `requestId`, a lock-watch
   * event or an inspection is answered at once, though the grant it reveals may not be
   * acknowledged yet. Default false.
   */
  readonly unsafeOwnEntriesOnly?: boolean | undefined;
  /**
   * TEST ONLY (`LEASEHOLD_TEST_BREAK=unheld-before-attach`): a request that began before the term's
   * standby was attached and in sync (no replicator yet, or its rule still `out`: the term's first
   * moments, or after its standby was recorded not in sync) is answered unheld, whenever it is
   * granted: whether to hold is decided when the request begins, not when its answer is ready.
   * Default false.
   */
  readonly unsafeFromAttach?: boolean | undefined;
}

/**
 * The rule "every answer that reveals a grant waits for the acknowledgement of the entry that
 * created it" (DESIGN.md "Locks that outlive their leader"), for one term. An answer is held, at the
 * moment it is ready, until the standby acknowledged every entry that needs one appended so far:
 * that covers the entry of the grant it reveals however the answer came about (the first answer,
 * a retry with the same `requestId` on any connection, which the table answers without a new
 * entry, a lock-batch line, a wait-for-locks answer, a lock-watch event, an inspection), and
 * it covers requests that began before the term had a replicator: the replicator is looked up
 * when the answer is ready, not when the request began. Waiting for every pending entry, not just
 * the revealed one, is conservative (a few microseconds of other grants' round trip), never unsafe.
 *
 * Once attached, the replicator stays: after its replication closed (the term ended) a pending
 * answer is rejected with the close error, never given unheld.
 */
export class RevealedAnswers {
  private replicator: TermReplicator | null = null;

  constructor(private readonly options: RevealedAnswersOptions = {}) {}

  /** The term's replicator, `null` before the leader side attached one. */
  get current(): TermReplicator | null {
    return this.replicator;
  }

  /** The leader side attached `replicator` to the term: answers wait for it from now on. */
  attach(replicator: TermReplicator): void {
    this.replicator = replicator;
  }

  /**
   * Begin an operation that may grant or reveal a grant (a lock, a lock-batch line, a
   * wait-for-locks): an immediate answer with something pending becomes a {@link WaitingLockHandle}
   * that settles once acknowledged (`acknowledging`: decided, only waiting for the standby); a
   * waiting one settles once its answer is ready and acknowledged.
   */
  begun<A>(begin: () => A | WaitingLockHandle<A>): A | WaitingLockHandle<A> {
    const attached = this.replicator;
    const before = attached?.neededSeq ?? 0;
    const begun = begin();
    if (begun instanceof WaitingLockHandle) {
      if (this.options.unsafeFromAttach === true && (attached === null || attached.replication.rule.state === "out")) return begun;
      const answer = begun.answer.then((value) => this.reveal(value, before));
      return new WaitingLockHandle(answer.catch(asUnavailable), begun.abandon, begun.acknowledging);
    }
    const pending = this.pending(before);
    if (pending === null) return begun;
    // Granted at once: the client may leave while the acknowledgement is awaited; the host then
    // releases what the undelivered answer granted, as for any answer it could not deliver. One
    // promise per answer: the turn's hold is shared (SyncRule.whenAcked).
    return new WaitingLockHandle(
      pending.then(() => begun, asUnavailable),
      () => undefined,
      true,
    );
  }

  /** Run an operation that answers a promise (transactions/start, timestamp leases, lock events, inspection), its answer held likewise. */
  answer<A>(operation: () => Promise<A>): Promise<A> {
    const before = this.replicator?.neededSeq ?? 0;
    return operation().then((value) => this.reveal(value, before)).catch(asUnavailable);
  }

  /** `value` now, or once the standby holds what it may reveal. */
  private reveal<A>(value: A, before: number): A | Promise<A> {
    const pending = this.pending(before);
    return pending === null ? value : pending.then(() => value);
  }

  /** What an answer ready now must wait for (`null`: nothing, it may be given at once). */
  private pending(before: number): Promise<unknown> | null {
    const replicator = this.replicator;
    if (replicator === null) return null;
    // The broken rule: only entries appended since the operation began count.
    if (this.options.unsafeOwnEntriesOnly === true && replicator.neededSeq <= before) return null;
    return replicator.settled();
  }
}
