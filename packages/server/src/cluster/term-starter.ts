import { randomUUID } from "node:crypto";
import { effectiveValidForMs } from "../engine/lock-engine-options.js";
import type { ClusterRuntimeOptions } from "./cluster-runtime-options.js";
import type { AcquiredTerm, AdoptedTerm, LeaseClaim, LoadedBound, ShardLease } from "./coordinator.js";
import { carriedLeaseMs, leaseWaitEnd } from "./margins.js";
import type { CarriedTable, ReplicaPromoter } from "./replication/promote-replica.js";
import { ShardTerm } from "./shard-term.js";

/** What a {@link TermStarter} reads of, and reports to, its runtime. */
export interface TermStarterHost {
  readonly options: ClusterRuntimeOptions;
  /** Monotonic clock (ms). */
  readonly clock: () => number;
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
  /** A term started: the runtime records it and the row as it now stands. */
  readonly onStarted: (term: ShardTerm, row: ShardLease) => void;
  /** Renew every term at once (the acquisition waited long: the gate may close before the next tick). */
  readonly renewSoon: () => void;
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
    // The in-sync standby of this very process takes the shard with its replica (same leaderId).
    const carried = promoter?.forTakeover(row) ?? null;
    const claim = this.claim(carried?.leaderId ?? randomUUID(), carried !== null && promoter?.fencesAcquisition === true);
    return this.claimThenStart(row, claim, carried, () => this.host.options.coordinator.acquire(row.shard, row.version, claim), "a shard acquisition failed; its outcome is read back next round");
  }

  /** Adopt a row handed over to this standby: start its term with the replica once the fenced adoption wrote the row. */
  adopt(row: ShardLease, carried: CarriedTable): Promise<void> {
    const claim = this.claim(carried.leaderId, true);
    const failed = "adopting a handed-over shard failed; it expires and is taken over as after a crash";
    const bounds = { namespaces: Object.keys(carried.namespaces), block: this.host.options.reserveBlock };
    return this.claimThenStart(row, claim, carried, () => this.host.options.coordinator.adoptHandOver(row.shard, row.epoch, claim, bounds), failed);
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
   * and not adopted; `null` when nothing was tried (no replica of the shard here).
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
      epoch: candidate.epoch,
      expired: false,
      standbyId: null,
      standbyIncarnation: null,
      inSync: false,
    };
    const t0 = this.host.clock();
    try {
      const namespaces = promoter.replicaNamespaces(shard);
      const adopted = await this.adoptHandedOver(row, candidate.leaderId, namespaces, () => promoter.takeHandedOver(shard, candidate.epoch, candidate.leaderId));
      // Test mode (--log-level debug): whether the NOTIFY was this standby's hand-over.
      this.host.options.logger.debug({ shard, epoch: candidate.epoch, adopted, tookMs: Math.round(this.host.clock() - t0) }, "adoption on NOTIFY tried");
      return adopted;
    } finally {
      promoter.endNotifiedAdoption(shard);
    }
  }

  /** {@link adoptOnNotify}'s statement and start: false when it matched nothing or failed. */
  private async adoptHandedOver(row: ShardLease, leaderId: string, namespaces: readonly string[], take: () => CarriedTable | null): Promise<boolean> {
    const { host } = this;
    const { coordinator, serverId } = host.options;
    const claim = this.claim(leaderId, true);
    const sentAt = host.clock();
    const sentWall = host.wallClock();
    let got;
    try {
      got = await coordinator.adoptHandOver(row.shard, row.epoch, claim, { namespaces, block: host.options.reserveBlock });
    } catch (err) {
      host.warn(err, "adopting a handed-over shard on its NOTIFY failed; the next read of the rows adopts it");
      return false;
    }
    if (got === null) return false;
    if (host.led(row.shard) !== null) return true;
    const carried = take();
    if (carried === null) {
      await coordinator.release(serverId, [got]).catch((err: unknown) => host.warn(err, "could not release a handed-over shard without its replica"));
      return true;
    }
    this.start(row, got, claim, sentAt, sentWall, carried, got.bounds);
    return true;
  }

  /** Send the claiming statement (times taken just before), then start the term unless it matched nothing or the shard is led already. */
  private async claimThenStart(row: ShardLease, claim: LeaseClaim, carried: CarriedTable | null, statement: () => Promise<AcquiredTerm | AdoptedTerm | null>, failed: string): Promise<void> {
    const { host } = this;
    const sentAt = host.clock();
    const sentWall = host.wallClock();
    let got;
    try {
      got = await statement();
    } catch (err) {
      return host.warn(err, failed);
    }
    if (got !== null && host.led(row.shard) === null) this.start(row, got, claim, sentAt, sentWall, carried, "bounds" in got ? got.bounds : undefined);
  }

  private claim(leaderId: string, withState: boolean): LeaseClaim {
    const { serverId, leaderLeaseMs, leaseMs, validForMs } = this.host.options;
    // Recorded by the acquisition, before the term serves.
    const valid = effectiveValidForMs(leaseMs, validForMs);
    return { serverId, incarnation: this.host.incarnation, url: this.host.url(), leaderId, leaderLeaseMs, lockLeaseMs: leaseMs, validForMs: valid, withState };
  }

  /** Serve a term just acquired (or adopted): empty with the lease-wait, or a promoted replica's table without one. */
  private start(row: ShardLease, got: AcquiredTerm, claim: LeaseClaim, sentAt: number, sentWall: number, carried: CarriedTable | null, loadedBounds?: readonly LoadedBound[]): void {
    const { host } = this;
    const { options } = host;
    const { coordinator, serverId, leaderLeaseMs, leaseMs, logger, metrics } = options;
    const { url, leaderId, validForMs } = claim;
    if (host.stopping()) {
      void coordinator.release(serverId, [got]).catch(() => undefined);
      return;
    }
    // A promoted table carries every lock granted: nothing to wait out.
    const leaseWaitMs = carried !== null || options.breaks?.has("lease-wait") === true ? 0 : leaseWaitEnd(0, got.lockDelayMs, leaderLeaseMs);
    const term = new ShardTerm({
      term: got,
      leaderId,
      serverId,
      coordinator,
      logger,
      clock: host.clock,
      wallClock: host.wallClock,
      gateUntil: { monotonic: sentAt + leaderLeaseMs - host.margin, wall: sentWall + leaderLeaseMs - host.margin },
      grantsFrom: host.clock() + leaseWaitMs,
      lockDelayMs: carried !== null ? validForMs : got.lockDelayMs,
      gateless: options.breaks?.has("gate") === true,
      leaseMs,
      validForMs,
      maxWaitingPerNamespace: options.maxWaitingPerNamespace,
      watchTtlMs: options.watchTtlMs,
      reserveBlock: options.reserveBlock,
      retryAfterMs: host.retryAfterMs(),
      onFailed: host.onFailed,
      onBoundExtended: () => metrics.boundExtensions.inc({}),
      carried: carried?.namespaces,
      // Every holder keeps its lock as long as an earlier leader told it (TEST ONLY: not with short-carried-lease).
      carriedLeaseMs: options.breaks?.has("short-carried-lease") === true ? leaseMs : carriedLeaseMs(leaseMs, got.lockDelayMs, leaderLeaseMs),
      loadedBounds,
      claimWindowMs: options.breaks?.has("drop-carried-waiters") === true ? 0 : undefined,
    });
    host.onStarted(term, { ...row, holder: serverId, url, leaderId, incarnation: host.incarnation, epoch: got.epoch, expired: false });
    // Counted from when it was sent, the gate may close before the next tick's renewal answers
    // when the acquisition waited long for a connection: renew this term at once then.
    if (host.clock() - sentAt > leaderLeaseMs / 3 - host.margin) host.renewSoon();
    const handedOver = row.holder === serverId;
    const reason = carried !== null ? (handedOver ? "handed over" : "standby takeover") : row.holder !== null ? "expired" : row.epoch === 0 ? "never led" : "released";
    metrics.transitions.inc({ event: "acquired" });
    logger.info({ shard: got.shard, epoch: got.epoch, leaderId, reason, lockDelayMs: got.lockDelayMs, leaseWaitMs }, "shard acquired");
    if (carried !== null) host.promoter()?.logPromotion(term, handedOver ? "hand-over" : "takeover", carried.epoch);
  }
}
