import type { Coordinator, LiveMember, MemberInfo } from "./coordinator.js";
import { realProcessClock, type ProcessClock } from "./process-clock.js";
import type { ShardTerm } from "./shard-term.js";
import type { GateDeadline } from "./shard-term-options.js";

/** What a {@link LeaseRenewer} is made with. */
export interface LeaseRenewerOptions {
  readonly coordinator: Coordinator;
  readonly serverId: string;
  readonly leaderLeaseMs: number;
  /** How long before `t_sent + leaderLeaseMs` a renewed gate closes (the runtime's margin). */
  readonly margin: number;
  /** Monotonic clock (ms). */
  readonly clock: () => number;
  /** Wall clock (ms since the epoch). */
  readonly wallClock: () => number;
  /** Sets the renewal cadence's timer on the same clock. Default: Node's `setTimeout`, unref'd. */
  readonly setTimer?: ProcessClock["setTimer"] | undefined;
  /** The terms this server leads now (each renewal sends these). */
  readonly held: () => readonly ShardTerm[];
  /**
   * The terms given up with their hand-over still running (gate closed, row not moved yet): each
   * renewal sends those still handing over too, so the row cannot expire under a hand-over slowed
   * by the final acknowledgement or the database (another member could then take the shard with
   * an empty table). Their row moves, or is released, by a fenced statement; a renewal after that
   * matches nothing and changes nothing. Default none.
   */
  readonly handingOver?: (() => readonly ShardTerm[]) | undefined;
  /**
   * TEST ONLY (`LEASEHOLD_TEST_BREAK=stop-renewing-handing-over`): terms being handed over are not
   * renewed, so a negative control can show their row expiring under the hand-over. Default false.
   */
  readonly unsafeStopRenewingHandingOver?: boolean | undefined;
  /** This server as its next heartbeat registers it. */
  readonly member: () => MemberInfo;
  /** A renewal matched nothing for `term`: another server may lead its shard (the runtime ends it). */
  readonly onUnmatched: (term: ShardTerm) => void;
  /** A heartbeat sent at `sentAt` (monotonic ms) answered the live members. */
  readonly onMembers: (members: LiveMember[], sentAt: number) => void;
  /** A statement failed (the runtime logs it, rate-limited). */
  readonly onError: (err: unknown, msg: string) => void;
}

/**
 * The lease loop of one server, on its own timer: every third of the leader lease it sends one
 * renewal of every shard it leads (and of every shard it is handing over, until the row moved)
 * and one heartbeat, whatever else runs (a pass reading the rows, acquisitions, NOTIFY passes,
 * bound loads). A due renewal is never skipped or held back, and its
 * answer is applied the moment it arrives, on its own: each renewed term's gate moves to
 * `t_sent + leaderLease − margin` (both clocks read just before sending), a term the renewal did
 * not match ends. The PostgreSQL coordinator runs both statements on connections of their own, so
 * they never queue behind request-driven statements.
 */
export class LeaseRenewer {
  private cancelTick: (() => void) | null = null;
  private beating: Promise<unknown> | null = null;
  private stopped = false;
  /** True once {@link leave} ran: renewals go on, heartbeats stop. */
  private leaving = false;
  private extra: Promise<void> | null = null;
  private extraAgain = false;

  constructor(private readonly options: LeaseRenewerOptions) {}

  /** Renew and heartbeat now, then every third of the leader lease until {@link stop}. */
  start(): void {
    if (this.stopped || this.cancelTick !== null) return;
    this.tick();
  }

  /** Stop ticking; resolves once a heartbeat in flight settled (so a later `leave` is not undone by it). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelTick?.();
    this.cancelTick = null;
    await this.beating?.catch(() => undefined);
  }

  /**
   * Stop heartbeating but keep renewing the terms still held until {@link stop}: a stopping member
   * leaves the member list at once, yet a shard it is still getting a standby for (to hand it over
   * with its table) must keep its gate open meanwhile. Resolves once a heartbeat in flight settled
   * (so a later `leave` of the member row is not undone by it).
   */
  async leave(): Promise<void> {
    this.leaving = true;
    await this.beating?.catch(() => undefined);
  }

  private tick(): void {
    if (this.stopped) return;
    void this.renew();
    if (!this.leaving) this.heartbeat();
    const setTimer = this.options.setTimer ?? realProcessClock.setTimer;
    this.cancelTick = setTimer(() => this.tick(), Math.max(1, Math.floor(this.options.leaderLeaseMs / 3)));
  }

  /**
   * An extra renewal of every led term, outside the ticks: for a term whose acquisition answered
   * late (it waited for a pooled connection behind bound loads; its gate counts from when it was
   * asked for), whose gate could otherwise close before the next tick's renewal answers.
   * Coalesced: at most one extra renewal in flight, and one more after it when asked meanwhile,
   * so a burst of takeovers costs two statements, not one per shard.
   */
  renewSoon(): void {
    if (this.stopped) return;
    if (this.extra !== null) {
      this.extraAgain = true;
      return;
    }
    this.extra = this.renew().finally(() => {
      this.extra = null;
      if (!this.extraAgain) return;
      this.extraAgain = false;
      this.renewSoon();
    });
  }

  /** One renewal of every led term, sent now even if an earlier one is still in flight; settles when applied. */
  renew(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    const { coordinator, serverId, leaderLeaseMs, margin } = this.options;
    const held = [...this.options.held(), ...this.handingOver()];
    if (held.length === 0) return Promise.resolve();
    // Read just before sending: the gate counts from here, never from when the answer arrives.
    const sent: GateDeadline = { monotonic: this.options.clock(), wall: this.options.wallClock() };
    const until: GateDeadline = { monotonic: sent.monotonic + leaderLeaseMs - margin, wall: sent.wall + leaderLeaseMs - margin };
    return coordinator.renew(serverId, held.map((t) => ({ shard: t.shard, epoch: t.epoch })), leaderLeaseMs).then(
      (shards) => {
        const ok = new Set(shards);
        for (const term of held) {
          if (ok.has(term.shard)) term.extendGate(until);
          else if (!term.isEnded) this.options.onUnmatched(term);
        }
      },
      (err: unknown) => this.options.onError(err, "lease renewal failed; serving continues until the gate closes"),
    );
  }

  /** The terms still being handed over, renewed until their row moved (none under the test break). */
  private handingOver(): ShardTerm[] {
    if (this.options.unsafeStopRenewingHandingOver === true) return [];
    return (this.options.handingOver?.() ?? []).filter((term) => term.handingOver);
  }

  private heartbeat(): void {
    // A heartbeat still in flight is as good as a new one (it only keeps the member row fresh).
    if (this.beating !== null) return;
    const sentAt = this.options.clock();
    const beat = this.options.coordinator.heartbeat(this.options.member(), this.options.leaderLeaseMs * 2);
    this.beating = beat;
    beat.then(
      (members) => {
        if (!this.stopped) this.options.onMembers(members, sentAt);
      },
      (err: unknown) => this.options.onError(err, "heartbeat failed; other servers count this one live for two leader leases after its last"),
    ).finally(() => {
      if (this.beating === beat) this.beating = null;
    });
  }
}
