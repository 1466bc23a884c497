import type { Logger } from "pino";
import type { Coordinator, HeldTerm, LoadedBound } from "./coordinator.js";
import type { HeldBackPlaces } from "./held-back-places.js";
import type { ProcessClock } from "./process-clock.js";
import type { RevealedAnswersOptions } from "./replication/revealed-answers.js";

/**
 * When a serving gate closes, on each of two clocks: `t_sent + leaderLease − margin`, where
 * `t_sent` was read from that clock just before the renewal (or acquisition) was sent. The gate is
 * closed once *either* clock reaches its deadline.
 */
export interface GateDeadline {
  /** On the monotonic clock (`performance.now()`, ms). */
  readonly monotonic: number;
  /** On the wall clock (`Date.now()`, ms). */
  readonly wall: number;
}

/**
 * What a term is made with. `Term` is the term the callbacks are given (`ShardTerm`): a type
 * parameter, so this file need not import the class that imports it (`never` where no callback is
 * called, as in `TermGate`).
 */
export interface ShardTermOptions<Term = never> {
  readonly term: HeldTerm;
  readonly leaderId: string;
  readonly serverId: string;
  readonly coordinator: Coordinator;
  readonly logger: Logger;
  /** Monotonic clock (ms). */
  readonly clock: () => number;
  /**
   * Wall clock (ms since the epoch). The gate also closes by it: a paused VM's monotonic clock
   * does not advance while the guest is stopped, its wall clock is set forward on resume.
   */
  readonly wallClock: () => number;
  /**
   * Sets a timer on {@link clock}'s time (the gate, the lease-wait, the engine's deadlines, bound
   * retries). Default: Node's `setTimeout`, unref'd; the simulator passes its process's.
   */
  readonly setTimer?: ProcessClock["setTimer"] | undefined;
  /** When the gate first closes: `t_sent + leaderLease − margin` of the acquisition, on both clocks. */
  readonly gateUntil: GateDeadline;
  /** Monotonic time from which locks may be granted (the previous leaders' leases have run out). */
  readonly grantsFrom: number;
  /**
   * The lease-wait record this term waits out (`AcquiredTerm.lockDelayMs`). When it is above
   * {@link validForMs}, the record is lowered to this term's own once the wait is over.
   */
  readonly lockDelayMs: number;
  readonly leaseMs: number;
  /** The `validForMs` of every lease this term answers: the value its acquisition recorded. */
  readonly validForMs: number;
  readonly maxWaitingPerNamespace?: number | undefined;
  /** How long a lock watch lasts unless re-registered (see `LockServiceOptions.watchTtlMs`). */
  readonly watchTtlMs?: number | undefined;
  /** Size of a bound reservation block. */
  readonly reserveBlock: number;
  /** How long a client should wait before re-sending after this term ends. */
  readonly retryAfterMs: number;
  /** Called once when the term must end on its own (deposed: a fenced write matched nothing): the runtime ends it. */
  readonly onFailed: (term: Term, reason: string) => void;
  /**
   * Called once each time the gate closes by time (no renewal confirmed the row in time): the term
   * serves nothing but keeps its table, and its renewals go on; a renewal that matches reopens the
   * gate ({@link ShardTerm.extendGate}), one that matches nothing ends the term. Default: nothing.
   */
  readonly onGateClosed?: ((term: Term) => void) | undefined;
  /**
   * TEST ONLY (`LEASEHOLD_TEST_BREAK=end-on-gate-close`): a gate closed by time ends the term at
   * once, table and all (`onFailed` with "serving gate closed"), as before pnpm sim's seeds 73 and
   * 132. Default false.
   */
  readonly endOnGateClose?: boolean | undefined;
  /**
   * TEST ONLY (`LEASEHOLD_TEST_BREAK=arrive-as-wait-ends`): a request that arrives once the
   * lease-wait is due but before its timer fired looks for its namespace's held-back line before
   * its own arrival ends the wait and starts that line, so it joins a line already gone: it is
   * never started, and later requests on its descriptor are granted ahead of it. Default off.
   */
  readonly detachAtWaitEnd?: boolean | undefined;
  /**
   * TEST ONLY (`LEASEHOLD_TEST_BREAK=hold-while-handing-over`): the held-back lines ignore a
   * balance hand-over's pause. A request that reaches the term while the gate is shut, for a
   * namespace held back (its bound loading, or the lease-wait), takes a place in the held-back line
   * instead of being refused; the hand-over's entry, taken when the gate shut, does not carry it,
   * so a later request that reaches the taker first is granted ahead of it. And a line whose bound
   * loads during the pause starts into the shut gate and is refused, so an abandoned hand-over
   * leaves its order to whichever re-send comes first. Default off.
   */
  readonly holdWhileHandingOver?: boolean | undefined;
  readonly onBoundExtended: () => void;
  /**
   * The namespaces' images of a promoted replica (a standby taking the shard over with its state),
   * keyed by namespace: the table starts with them, every lease restarted at {@link carriedLeaseMs},
   * each carried waiter kept for the claim window; `leaderId` must be the replica's. Default: none,
   * the table starts empty.
   */
  readonly carried?: Readonly<Record<string, unknown>> | undefined;
  /**
   * How long the carried leases last from the promotion (`margins.ts` `carriedLeaseMs`: the
   * longest `validForMs` an earlier leader answered, plus the clock margin, when longer than
   * {@link leaseMs}). Default, and never less than, {@link leaseMs}.
   */
  readonly carriedLeaseMs?: number | undefined;
  /**
   * Bounds the statement that started this term already loaded under its epoch (an adoption of a
   * hand-over loads the carried namespaces' bounds in the same statement): those namespaces serve
   * at once, the others carried are loaded before the term serves. Default: none.
   */
  readonly loadedBounds?: readonly LoadedBound[] | undefined;
  /**
   * How long each carried waiter keeps its place for its re-sent `requestId` (see `carried`).
   * Default: the engine's (2,000 ms: a client re-sends at once after its 503, well within it). The
   * test break `drop-carried-waiters` sets 0, so a negative control shows the place is lost without it.
   */
  readonly claimWindowMs?: number | undefined;
  /**
   * The places of the requests an earlier leader still held back in its lease-wait when it handed
   * the table over (its hand-over entry carried them): each namespace's line starts with them, in
   * their order, each kept for {@link claimWindowMs} for its re-sent `requestId`. Default: none.
   */
  readonly heldBack?: HeldBackPlaces | undefined;
  /** TEST ONLY (`LEASEHOLD_TEST_BREAK=gate`): the gate never closes by time. Default false. */
  readonly gateless?: boolean | undefined;
  /** TEST ONLY (`retry-before-ack`, `unheld-before-attach`): see {@link RevealedAnswersOptions}. Default: the rule whole. */
  readonly revealed?: RevealedAnswersOptions | undefined;
}
