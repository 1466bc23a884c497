import type { LockWatchSince, LockWatchUpdate } from "@leasehold/protocol";
import { exclusion, fencingOrder, timestampOrder, waitForLocks } from "./sim-lock-checks.js";
import type { Asked, Freed, Hold, IdSeen, Immutable, Leased, Stamps, Txn, Violation, Waiter, WatchAnswer } from "./sim-records.js";
import { idsNeverReturn, lockWatch, logIdsOfOneTable, refreshedUnderOwnLeader } from "./sim-table-checks.js";
import { QueueOrder } from "./sim-queue-order.js";
import { immutableTimestamps } from "./sim-txn-checks.js";
import { balanceTargets, type BalanceMove } from "./sim-balance-target.js";

export type { Hold, Txn, Violation } from "./sim-records.js";

/** A fault's span, and whether a crash of one server must lose nothing during it (the cluster was protected). */
interface Failure {
  readonly what: string;
  readonly from: number;
  to: number;
  /** The cluster was protected when it began and no other failure was under way. */
  readonly single: boolean;
  /** The fault only stops servers by SIGTERM (nothing crashes, pauses or is cut off): queue order holds through it. */
  readonly stopsOnly: boolean;
  /**
   * When a crash's member restarted (`Infinity` before, and for every other kind): the crashed
   * process is gone, so a request first queued after that cannot be one it held, and queue order
   * holds for it whatever the crash's aftermath does to the rows (the span's `to`).
   */
  restarted: number;
}

/**
 * How long after the last fault healed every waiting request must again be answered by its
 * deadline (granted, free or timed out): time for restarted members to rejoin and the shards they
 * take over or are handed to serve again (a few leader leases).
 */
const SETTLE_MS = 3_000;

/**
 * What the simulated clients were told, in true time, and the checks of the cluster's promises
 * against it (DESIGN.md "Proving cluster mode": invariants from the clients' side):
 * - exclusion: no two holders of a conflicting mode within the guarantees they were given, and no
 *   more permit holders than the limit (permit-limit);
 * - fencing order: a grant received before another was asked for has the lower fencing token;
 * - timestamp order: a range received before another was asked for lies wholly below it;
 * - durability: no lock or transaction reported lost (a refresh inside its guarantee that answered
 *   without it) while every failure during its life was a single failure of a protected cluster;
 * - wait-for-locks: never `free` while a client held the descriptor in a conflicting mode
 *   throughout the wait;
 * - immutable timestamp: never above a live transaction's start;
 * - leader id: a refresh keeps a token under the leaderId that granted it; no leaderId or logId
 *   comes back once a newer one served; a logId goes with one leaderId;
 * - lock watch: one event per version of a log, logs never forget what they told, no second
 *   exclusive holder in a followed log, no event for what nobody asked;
 * - queue order: no lock request granted ahead of one queued earlier on its descriptor, across
 *   hand-overs (sim-queue-order.ts);
 * - waiter liveness: once the faults are over, every waiting request is answered by its deadline;
 *   liveness: every shard is led again at the end (found by the run itself);
 * - balance target: no balance move begins towards a member silent for longer than the code takes
 *   to stop counting it (sim-balance-target.ts; from the servers' decisions, not the clients').
 */
export class SimHistory {
  readonly holds: Hold[] = [];
  readonly txns: Txn[] = [];
  private readonly stamps: Stamps[] = [];
  private readonly immutables: Immutable[] = [];
  private readonly waiters: Waiter[] = [];
  private readonly freed: Freed[] = [];
  private readonly leaderIds: IdSeen[] = [];
  private readonly logIds: IdSeen[] = [];
  private readonly pairs: { namespace: string; leaderId: string; logId: string; at: number }[] = [];
  private readonly refreshes: { hold: Leased; leaderId: string; at: number }[] = [];
  private readonly watches: WatchAnswer[] = [];
  private readonly asked: Asked[] = [];
  private readonly failures: Failure[] = [];
  private readonly balanceMoves: BalanceMove[] = [];
  /** The order lock requests were queued and granted in, as observed on the servers. */
  readonly queue = new QueueOrder();
  readonly extra: Violation[] = [];

  /** A grant reached `client`. */
  granted(hold: Omit<Hold, "guaranteeEnd" | "releasedAt" | "lostAt">, validForMs: number): Hold {
    const h: Hold = { ...hold, guaranteeEnd: hold.sentAt + validForMs, releasedAt: Infinity, lostAt: null };
    this.holds.push(h);
    this.leaderSeen(h.namespace, h.leaderId, h.sentAt, h.receivedAt, `${h.client}'s lock of ${h.descriptor}`);
    return h;
  }

  /** A transaction's start reached `client` (its immutable-timestamp lock is held under `token`). */
  started(txn: Omit<Txn, "guaranteeEnd" | "releasedAt" | "lostAt">, validForMs: number): Txn {
    const t: Txn = { ...txn, guaranteeEnd: txn.sentAt + validForMs, releasedAt: Infinity, lostAt: null };
    this.txns.push(t);
    return t;
  }

  /** A lock request was sent (whatever comes of it). */
  asking(asked: Asked): void {
    this.asked.push(asked);
  }

  /** A request that may wait on the server was sent; answers its record, to fill in with {@link answered}. */
  waiting(waiter: Omit<Waiter, "answeredAt" | "status" | "gaveUpAt">): Waiter {
    const w: Waiter = { ...waiter, answeredAt: null, status: null, gaveUpAt: null };
    this.waiters.push(w);
    return w;
  }

  /** `waiter`'s answer reached its client at `at` (`null`: its client gave up at its deadline with none). */
  answered(waiter: Waiter, status: string | null, at: number): void {
    if (waiter.answeredAt !== null) return;
    if (status === null) waiter.gaveUpAt ??= at;
    else {
      waiter.answeredAt = at;
      waiter.status = status;
    }
  }

  /** A wait-for-locks was answered `free`. */
  free(freed: Freed): void {
    this.freed.push(freed);
  }

  /** A refresh of `hold` sent at `sentAt` answered (`kept`: the token was in the answer) at `at` under `leaderId`. */
  refreshed(hold: Leased, sentAt: number, kept: boolean, validForMs: number, at: number, leaderId?: string): void {
    if (kept) {
      hold.guaranteeEnd = Math.max(hold.guaranteeEnd, sentAt + validForMs);
      if (leaderId !== undefined) {
        this.refreshes.push({ hold, leaderId, at });
        this.leaderSeen(hold.namespace, leaderId, sentAt, at, `${hold.client}'s refresh`);
      }
    } else if (sentAt < hold.guaranteeEnd && hold.lostAt === null && hold.releasedAt === Infinity) hold.lostAt = at;
  }

  /** The client sent the unlock of `hold` at `at`. */
  released(hold: Leased, at: number): void {
    hold.releasedAt = Math.min(hold.releasedAt, at);
  }

  /** A table answered `leaderId` for `namespace` to a request sent at `sentAt`, received at `receivedAt`. */
  leaderSeen(namespace: string, leaderId: string, sentAt: number, receivedAt: number, what: string): void {
    this.leaderIds.push({ namespace, id: leaderId, sentAt, receivedAt, what });
  }

  timestamps(namespace: string, start: number, count: number, sentAt: number, receivedAt: number): void {
    this.stamps.push({ namespace, start, count, sentAt, receivedAt });
  }

  /** An immutable timestamp reached a client (with the start timestamps given beside it, if any). */
  immutable(immutable: Immutable): void {
    this.immutables.push(immutable);
  }

  /** A lock-event update reached a watcher (`leaderId`: the lease answered beside it, by `transactions/start`). */
  watched(client: string, namespace: string, since: LockWatchSince | null, update: LockWatchUpdate, sentAt: number, receivedAt: number, leaderId?: string): void {
    this.watches.push({ client, namespace, since, update, sentAt, receivedAt });
    this.logIds.push({ namespace, id: update.logId, sentAt, receivedAt, what: `${client}'s lock events` });
    if (leaderId !== undefined) this.pairs.push({ namespace, leaderId, logId: update.logId, at: receivedAt });
  }

  /**
   * A fault began (`single`: the cluster was protected and nothing else had failed; `stopsOnly`: it
   * only stops servers by SIGTERM, so every waiter keeps its place through it); answers its
   * end-setter (`restarted`: a crash's restart, see {@link Failure.restarted}).
   */
  failed(what: string, at: number, single: boolean, stopsOnly = false): (to: number, restarted?: number) => void {
    const failure: Failure = { what, from: at, to: Infinity, single, stopsOnly, restarted: Infinity };
    this.failures.push(failure);
    return (to, restarted) => {
      failure.to = to;
      if (restarted !== undefined) failure.restarted = restarted;
    };
  }

  /** A member began a balance move (sim-balance-target.ts). */
  balanceBegun(move: BalanceMove): void {
    this.balanceMoves.push(move);
  }

  /** A liveness (or other) promise broken, found by the run itself. */
  violated(v: Violation): void {
    this.extra.push(v);
  }

  /** Every violation, each once. */
  check(): Violation[] {
    return [
      ...exclusion(this.holds),
      ...fencingOrder(this.holds),
      ...timestampOrder(this.stamps),
      ...this.durability(),
      ...waitForLocks(this.freed, this.holds),
      ...immutableTimestamps(this.immutables, this.txns),
      ...refreshedUnderOwnLeader(this.refreshes),
      ...idsNeverReturn(this.leaderIds, "leaderId"),
      ...idsNeverReturn(this.logIds, "logId"),
      ...logIdsOfOneTable(this.pairs),
      ...lockWatch(this.watches, this.asked),
      ...this.waiterLiveness(),
      ...this.queue.check((from, to) => this.failures.every((f) => f.stopsOnly || Math.min(f.to, f.restarted) < from || f.from > to)),
      ...balanceTargets(this.balanceMoves),
      ...this.extra,
    ];
  }

  private durability(): Violation[] {
    const out: Violation[] = [];
    for (const h of [...this.holds, ...this.txns]) {
      if (h.lostAt === null) continue;
      const during = this.failures.filter((f) => f.from < h.lostAt! && f.to > h.receivedAt);
      if (during.every((f) => f.single)) {
        const what = during.map((f) => f.what).join(", ") || "no failure";
        const name = "descriptor" in h ? `${h.namespace}/${h.descriptor}: ${h.client}'s lock (token ${h.fencingToken}` : `${h.namespace}: ${h.client}'s transaction (start ${h.start}`;
        out.push({ invariant: "durability", detail: `${name}, leader ${h.leaderId}) granted at ${h.receivedAt.toFixed(1)} (asked at ${h.sentAt.toFixed(1)}), reported lost at ${h.lostAt.toFixed(1)} inside its guarantee (until ${h.guaranteeEnd.toFixed(1)}), through ${what}` });
      }
    }
    return out;
  }

  /** Every request sent once the faults were over (and {@link SETTLE_MS} more) was answered by its deadline. */
  private waiterLiveness(): Violation[] {
    if (this.failures.some((f) => f.to === Infinity)) return [];
    const quietFrom = Math.max(0, ...this.failures.map((f) => f.to)) + SETTLE_MS;
    return this.waiters
      .filter((w) => w.sentAt >= quietFrom && w.answeredAt === null && w.gaveUpAt !== null)
      .map((w) => ({ invariant: "waiter-liveness" as const, detail: `${w.namespace}: ${w.client}'s ${w.what} (acquireTimeoutMs ${w.acquireTimeoutMs}) sent at ${w.sentAt.toFixed(1)}, ${(w.sentAt - quietFrom + SETTLE_MS).toFixed(0)} ms after the last fault healed, had no answer when its client gave up at ${w.gaveUpAt!.toFixed(1)}` }));
  }
}
