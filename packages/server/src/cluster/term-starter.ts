import { randomUUID } from "node:crypto";
import { effectiveValidForMs } from "../engine/lock-engine-options.js";
import type { ClusterRuntimeOptions } from "./cluster-runtime-options.js";
import type { AcquiredTerm, AdoptedTerm, LeaseClaim, LoadedBound, ShardLease } from "./coordinator.js";
import { carriedLeaseMs, leaseWaitEnd } from "./margins.js";
import type { CarriedTable, ClaimOutcome, PromotionCandidate, ReplicaPromoter } from "./replication/promote-replica.js";
import { ShardTerm } from "./shard-term.js";
import type { ProcessClock } from "./process-clock.js";

/** What a {@link TermStarter} reads of, and reports to, its runtime. */
export interface TermStarterHost {
  readonly options: ClusterRuntimeOptions;
  /** Monotonic clock (ms). */
  readonly clock: () => number;
  /** Sets a timer on the same clock (each term's gate, lease-wait and engine deadlines). Default: Node's. */
  readonly setTimer?: ProcessClock["setTimer"] | undefined;
  /** Wall clock (ms since the epoch). */
  readonly wallClock: () => number;
  /** How long before a taker could act the gate closes (`gateMargin`). */
  readonly margin: number;
  /** This process's incarnation, stored in the rows it claims. */
  readonly incarnation: string;
  readonly url: () => string;
  readonly retryAfterMs: () => number;
  readonly stopping: () => boolean;
  /** The promoter of this member's replicas, `null` without replication. */
  readonly promoter: () => ReplicaPromoter | null;
  /** The term this server leads of `shard` now, `null` when none. */
  readonly led: (shard: number) => ShardTerm | null;
  readonly onFailed: (term: ShardTerm, reason: string) => void;
  /** A term's gate closed by time (it keeps its table; see `ShardTermOptions.onGateClosed`). Default: nothing more. */
  readonly onGateClosed?: ((term: ShardTerm) => void) | undefined;
  /** A term started: the runtime records it and the row as it now stands. */
  readonly onStarted: (term: ShardTerm, row: ShardLease) => void;
  /** Renew every term at once (the acquisition waited long: the gate may close before the next tick). */
  readonly renewSoon: () => void;
  /** Read the rows again soon (a claiming statement failed: it may have committed). */
  readonly reread: () => void;
  readonly warn: (err: unknown, msg: string) => void;
}

/**
 * The acquisition of shards and the start of their terms: an expired or free row is acquired with
 * an empty table (new `leaderId`, the lease-wait), or, by this process's in-sync standby, with its
 * promoted replica (same `leaderId`, no lease-wait, the acquisition fenced by the row's standby
 * columns); a row handed over to this process is adopted with its replica.
 */
export class TermStarter {
  constructor(private readonly host: TermStarterHost) {}

  /** Try to acquire `row`'s shard as it was read (its version). */
  acquire(row: ShardLease): Promise<void> {
    const promoter = this.host.promoter();
    // A claim of this shard with the replica is in flight (an adoption on a NOTIFY): not now.
    if (promoter?.busy(row.shard) === true) return Promise.resolve();
    // The in-sync standby of this very process takes the shard with its replica (same leaderId).
    const candidate = promoter?.forTakeover(row) ?? null;
    const claim = this.claim(candidate?.leaderId ?? randomUUID(), candidate !== null && promoter?.fencesAcquisition === true);
    const failed = "a shard acquisition failed; its outcome is read back at once";
    return this.claimThenStart(row, claim, candidate, () => this.host.options.coordinator.acquire(row.shard, row.version, claim), failed).then(() => undefined);
  }

  /** Adopt a row handed over to this standby: start its term with the replica once the fenced adoption wrote the row. */
  adopt(row: ShardLease, candidate: PromotionCandidate): Promise<void> {
    const failed = "adopting a handed-over shard failed; its outcome is read back at once";
    return this.adoptRow(row, candidate, failed).then(() => undefined);
  }

  /**
   * On a NOTIFY of `shard` (`known`: its row as last read), when this member holds a replica of
   * it: try adopting it as handed over to this standby, before reading the rows. The statement is
   * {@link adopt}'s, fenced by the row as the hand-over leaves it (holder and incarnation this
   * process, the replica's epoch + 1, its `leaderId`: what `ReplicaPromoter.forHandOver` checks on
   * a row read); the replica leaves the store only once it matched. Matching nothing (a release,
   * another holder) changes nothing. While it runs, the pass leaves the shard alone, and decides
   * as ever after it. Answers true when the row was adopted: started with the table, or released
   * when the replica no longer followed that term (no table to serve it with); false when tried
   * and not adopted (or its outcome is unknown: the replica stays for the next read of the rows);
   * `null` when nothing was tried (no replica of the shard here).
   */
  async adoptOnNotify(shard: number, known: ShardLease | undefined): Promise<boolean | null> {
    const promoter = this.host.promoter();
    const candidate = promoter?.beginNotifiedAdoption(shard) ?? null;
    if (promoter === null || candidate === null) return null;
    const row: ShardLease = {
      shard,
      version: known?.version ?? 0,
      transitions: known?.transitions ?? 0,
      url: this.host.url(),
      holder: this.host.options.serverId,
      incarnation: this.host.incarnation,
      leaderId: candidate.leaderId,
      epoch: candidate.epoch + 1,
      expired: false,
      standbyId: null,
      standbyIncarnation: null,
      inSync: false,
    };
    const t0 = this.host.clock();
    const outcome = await this.adoptRow(row, candidate, "adopting a handed-over shard on its NOTIFY failed; the next read of the rows adopts it");
    const adopted = outcome === "matched";
    // Test mode (--log-level debug): whether the NOTIFY was this standby's hand-over.
    this.host.options.logger.debug({ shard, epoch: row.epoch, adopted, tookMs: Math.round(this.host.clock() - t0) }, "adoption on NOTIFY tried");
    return adopted;
  }

  /** The fenced adoption of `row` (handed over to this process at its epoch) with the candidate's replica, then its start. */
  private adoptRow(row: ShardLease, candidate: PromotionCandidate, failed: string): Promise<ClaimOutcome> {
    const { options } = this.host;
    const claim = this.claim(candidate.leaderId, true);
    const bounds = { namespaces: this.host.promoter()?.replicaNamespaces(row.shard) ?? [], block: options.reserveBlock };
    // TEST ONLY (adopt-clears-former): the adoption clears the former leader's standby naming.
    const clearStandby = options.breaks?.has("adopt-clears-former") === true;
    return this.claimThenStart(row, claim, candidate, () => options.coordinator.adoptHandOver(row.shard, row.epoch, claim, bounds, clearStandby), failed);
  }

  /**
   * Send the claiming statement (times taken just before), settle the candidate's replica with
   * its outcome, then start the term unless it matched nothing or the shard is led already. A
   * statement that failed may have committed: the replica stays, and the rows are read again at
   * once (DESIGN.md: a rejected statement is "outcome unknown", never "did not happen"). A claim
   * with a replica that matched but whose replica is gone releases the row (no table to serve).
   */
  private async claimThenStart(
    row: ShardLease,
    claim: LeaseClaim,
    candidate: PromotionCandidate | null,
    statement: () => Promise<AcquiredTerm | AdoptedTerm | null>,
    failed: string,
  ): Promise<ClaimOutcome> {
    const { host } = this;
    const promoter = host.promoter();
    const sentAt = host.clock();
    const sentWall = host.wallClock();
    let got;
    try {
      got = await statement();
    } catch (err) {
      if (candidate !== null) promoter?.settle(candidate, "unknown");
      host.warn(err, failed);
      host.reread();
      return "unknown";
    }
    const carried = candidate === null ? null : (promoter?.settle(candidate, got === null ? "unmatched" : "matched") ?? null);
    if (got === null) return "unmatched";
    const led = host.led(row.shard);
    if (led !== null && led.epoch >= got.epoch) return "matched";
    // A term of an earlier epoch still runs here (its gate closed, its renewal not yet answered
    // "matched nothing"): the row moved past it, so it can never serve again. It ends now, and the
    // claimed term starts with the table, which the claim already took from the store.
    if (led !== null) host.onFailed(led, `superseded: this server claimed epoch ${got.epoch} of the shard`);
    if (candidate !== null && carried === null) {
      await host.options.coordinator.release(host.options.serverId, [got]).catch((err: unknown) => host.warn(err, "could not release a shard claimed without its replica"));
      return "matched";
    }
    this.start(row, got, claim, sentAt, sentWall, carried, "bounds" in got ? got.bounds : undefined);
    return "matched";
  }

  private claim(leaderId: string, withState: boolean): LeaseClaim {
    const { serverId, leaderLeaseMs, leaseMs, validForMs } = this.host.options;
    // Recorded by the acquisition, before the term serves.
    const valid = effectiveValidForMs(leaseMs, validForMs);
    return { serverId, incarnation: this.host.incarnation, url: this.host.url(), leaderId, leaderLeaseMs, lockLeaseMs: leaseMs, validForMs: valid, withState };
  }

  /** Serve a term just acquired (or adopted): empty with the lease-wait, or a promoted replica's table without one (but the rest of its leader's). */
  private start(row: ShardLease, got: AcquiredTerm, claim: LeaseClaim, sentAt: number, sentWall: number, carried: CarriedTable | null, loadedBounds?: readonly LoadedBound[]): void {
    const { host } = this;
    const { options } = host;
    const { coordinator, serverId, leaderLeaseMs, leaseMs, logger, metrics } = options;
    const { url, leaderId, validForMs } = claim;
    if (host.stopping()) {
      // A claim that landed once this server began to stop. Taken empty, it is released (nothing
      // was granted). Adopted with a table (a hand-over that reached this member as it stopped),
      // it is left to expire instead: a balance hand-over's row names the former leader its
      // in-sync standby, which then takes the shard over with every lock; a release would drop
      // them (found by pnpm sim, seed 143: a rolling restart). TEST ONLY: `stop-releases-adopted`.
      if (carried === null || options.breaks?.has("stop-releases-adopted") === true) void coordinator.release(serverId, [got]).catch(() => undefined);
      return;
    }
    // A promoted table carries every lock granted: nothing to wait out, but the rest of its
    // leader's own lease-wait when that leader had taken the shard empty and was still waiting
    // (TEST ONLY: not with drop-carried-lease-wait or hand-over-during-lease-wait).
    const dropCarriedWait = options.breaks?.has("drop-carried-lease-wait") === true || options.breaks?.has("hand-over-during-lease-wait") === true;
    const carriedWaitMs = carried === null || dropCarriedWait ? 0 : carried.leaseWaitLeftMs;
    const leaseWaitMs = options.breaks?.has("lease-wait") === true ? 0 : carried !== null ? carriedWaitMs : leaseWaitEnd(0, got.lockDelayMs, leaderLeaseMs);
    const term = new ShardTerm({
      term: got,
      leaderId,
      serverId,
      coordinator,
      logger,
      clock: host.clock,
      wallClock: host.wallClock,
      setTimer: host.setTimer,
      gateUntil: { monotonic: sentAt + leaderLeaseMs - host.margin, wall: sentWall + leaderLeaseMs - host.margin },
      grantsFrom: host.clock() + leaseWaitMs,
      lockDelayMs: carried !== null ? validForMs : got.lockDelayMs,
      gateless: options.breaks?.has("gate") === true,
      revealed: { unsafeOwnEntriesOnly: options.breaks?.has("retry-before-ack") === true, unsafeFromAttach: options.breaks?.has("unheld-before-attach") === true },
      leaseMs,
      validForMs,
      maxWaitingPerNamespace: options.maxWaitingPerNamespace,
      watchTtlMs: options.watchTtlMs,
      reserveBlock: options.reserveBlock,
      retryAfterMs: host.retryAfterMs(),
      onFailed: host.onFailed,
      onGateClosed: (closed) => {
        metrics.gateClosures.inc({});
        host.onGateClosed?.(closed);
      },
      endOnGateClose: options.breaks?.has("end-on-gate-close") === true,
      detachAtWaitEnd: options.breaks?.has("arrive-as-wait-ends") === true,
      holdWhileHandingOver: options.breaks?.has("hold-while-handing-over") === true,
      onBoundExtended: () => metrics.boundExtensions.inc({}),
      carried: carried?.namespaces,
      heldBack: carried?.heldBack,
      // Every holder keeps its lock as long as an earlier leader told it (TEST ONLY: not with short-carried-lease).
      carriedLeaseMs: options.breaks?.has("short-carried-lease") === true ? leaseMs : carriedLeaseMs(leaseMs, got.lockDelayMs, leaderLeaseMs),
      loadedBounds,
      claimWindowMs: options.breaks?.has("drop-carried-waiters") === true ? 0 : undefined,
    });
    // The standby the claim left named in sync (an adoption's former leader): the leader side
    // resumes the term's replication to it before anything is answered (LeaderSide.follow).
    const kept = "standby" in got ? ((got as AdoptedTerm).standby ?? null) : null;
    const named = { standbyId: kept?.serverId ?? null, standbyIncarnation: kept?.incarnation ?? null, inSync: kept !== null };
    host.onStarted(term, { ...row, holder: serverId, url, leaderId, incarnation: host.incarnation, epoch: got.epoch, expired: false, ...named });
    // Counted from when it was sent, the gate may close before the next tick's renewal answers
    // when the acquisition waited long for a connection: renew this term at once then.
    if (host.clock() - sentAt > leaderLeaseMs / 3 - host.margin) host.renewSoon();
    const handedOver = row.holder === serverId;
    const reason = carried !== null ? (handedOver ? "handed over" : "standby takeover") : row.holder !== null ? "expired" : row.epoch === 0 ? "never led" : "released";
    metrics.transitions.inc({ event: "acquired" });
    logger.info({ shard: got.shard, epoch: got.epoch, leaderId, reason, lockDelayMs: got.lockDelayMs, leaseWaitMs }, "shard acquired");
    if (carried !== null) host.promoter()?.logPromotion(term, handedOver ? "hand-over" : "takeover", carried.epoch, leaseWaitMs);
  }
}
