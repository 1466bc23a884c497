import { LeaseholdError, shardOf, type LockMode, type LockResponse } from "@leasehold/protocol";
import type { SimService } from "./sim-client.js";
import type { Violation } from "./sim-records.js";

/** How long a carried waiter keeps its place at a taker for its re-sent `requestId` (DESIGN.md "Hand-over with state": 2 s). */
const CLAIM_WINDOW_MS = 2_000;

/** What became of one send of a lock request on a server, as the simulator's observer saw it there. */
interface Seen {
  readonly at: number;
  /** `queued` (it waits), `granted`, `moved` (its term ended to hand the table over: 503), `ended` (any other end). */
  readonly kind: "queued" | "granted" | "moved" | "ended";
  /** The process that ran it (its service's per-process id). */
  readonly server: string;
  /** The lock table (`leaderId`) it queued in or was granted by; `null` when not known. */
  readonly table: string | null;
  /** A grant's fencing token (taken when the server granted it, whenever its client learned of it); null otherwise. */
  readonly fencingToken: number | null;
}

/** One lock request (all sends of one `requestId`) and what the servers did with it. */
interface Trail {
  readonly client: string;
  readonly requestId: string;
  readonly key: string;
  readonly mode: LockMode;
  readonly sentAt: number;
  readonly acquireTimeoutMs: number;
  readonly seen: Seen[];
}

/** A stop's or a balance move's hand-over ends a term with a 503 naming why (runtime-hand-overs.ts `lose`). */
const HANDED_OVER = /stopped leading shard \d+ \((this server is shutting down|balancing)/;

/**
 * First in, first out per descriptor (PROTOCOL.md "lock": "a request never overtakes an earlier
 * request queued on the same descriptor"), across hand-overs (DESIGN.md "Hand-over with state":
 * each waiter keeps its place 2 s for its re-sent `requestId`). The simulator's observer notes,
 * on the server that runs each send of a lock request, when it queued or was granted and in which
 * lock table, and when its term ended for a hand-over: something a client learns only from the
 * order of its answers. Checked only where the promise is whole: one-descriptor requests, a
 * waiter that stayed in one table (`leaderId`) on one server, or moved once by a hand-over and
 * re-sent to the taker within the claim window, before its own deadline; and no fault but a
 * SIGTERM during the wait (a crash or a lost row may promote a replica that never heard of it).
 */
export class QueueOrder {
  private readonly trails: Trail[] = [];

  /**
   * A lock request of one descriptor is about to be sent at `now()`; answers the call to make of a
   * server in place of `call`, which notes there what the server did with each send.
   */
  observe<A extends unknown[]>(
    now: () => number,
    request: { readonly client: string; readonly requestId: string; readonly namespace: string; readonly descriptor: string; readonly mode: LockMode; readonly acquireTimeoutMs: number },
    call: (s: SimService, ...args: A) => ReturnType<SimService["beginLock"]>,
  ): (s: SimService, ...args: A) => ReturnType<SimService["beginLock"]> {
    const { client, requestId, namespace, descriptor, mode, acquireTimeoutMs } = request;
    const trail: Trail = { client, requestId, key: `${namespace}/${descriptor}`, mode, sentAt: now(), acquireTimeoutMs, seen: [] };
    this.trails.push(trail);
    return (service, ...args) => {
      const begun = call(service, ...args);
      const server = service.leaderId;
      const note = (kind: Seen["kind"], table: string | null, fencingToken: number | null = null): void => void trail.seen.push({ at: now(), kind, server, table, fencingToken });
      const granted = (answer: LockResponse): void =>
        answer.status === "acquired" ? note("granted", answer.lease.leaderId, answer.acquired[0]?.fencingToken ?? null) : note("ended", null);
      if (!("answer" in begun)) {
        granted(begun);
        return begun;
      }
      const leaders = service.shardLeaders();
      note("queued", leaders[shardOf(namespace, leaders.length)]?.leaderId ?? null);
      begun.answer.then(granted, (err: unknown) => note(err instanceof LeaseholdError && HANDED_OVER.test(err.message) ? "moved" : "ended", null));
      return begun;
    };
  }

  /** Every overtaking, checked against the faults' spans (`quiet(from, to)`: only SIGTERMs began between). */
  check(quiet: (from: number, to: number) => boolean): Violation[] {
    const out: Violation[] = [];
    const byKey = new Map<string, Trail[]>();
    for (const t of this.trails) (byKey.get(t.key) ?? byKey.set(t.key, []).get(t.key)!).push(t);
    for (const [key, trails] of byKey) {
      for (const b of trails) {
        const grant = b.seen.find((s) => s.kind === "granted");
        if (grant === undefined || grant.table === null) continue;
        const arrived = b.seen.find((s) => (s.kind === "queued" || s.kind === "granted") && s.table === grant.table);
        if (arrived === undefined) continue;
        for (const a of trails) {
          if (a === b || !this.precedes(a, grant, arrived.at, quiet)) continue;
          out.push({
            invariant: "queue-order",
            detail: `${key}: ${b.client}'s ${b.mode} request ${b.requestId} (in table ${grant.table} from ${arrived.at.toFixed(1)}) was granted at ${grant.at.toFixed(1)} ahead of ${a.client}'s ${a.mode} request ${a.requestId}, queued there earlier (${a.seen.map((s) => `${s.kind} ${s.at.toFixed(1)}`).join(", ")})`,
          });
        }
      }
    }
    return out;
  }

  /** True when `a` had to be granted before `grant` (of a request that arrived in its table at `arrivedAt`). */
  private precedes(a: Trail, grant: Seen, arrivedAt: number, quiet: (from: number, to: number) => boolean): boolean {
    const table = grant.table;
    // Granted in that table before `grant` after all: a carried waiter is granted at the taker when
    // its turn comes and its client learns so only when it re-sends (the same token answers it).
    // Fencing tokens are taken in grant order per namespace, so the lower one was granted first.
    const token = grant.fencingToken;
    if (token !== null && a.seen.some((s) => s.kind === "granted" && s.table === table && s.fencingToken !== null && s.fencingToken < token)) return false;
    const before = a.seen.filter((s) => s.at <= grant.at);
    const first = before.find((s) => s.kind === "queued" && s.table === table);
    // Queued in that table before the other arrived there, and still waiting then (its own deadline counted from its first send).
    if (first === undefined || first.at >= arrivedAt || grant.at >= a.sentAt + a.acquireTimeoutMs) return false;
    const after = before.filter((s) => s.at >= first.at);
    if (after.some((s) => s.kind === "granted" || s.kind === "ended" || (s.kind === "queued" && s.table !== table))) return false;
    if (!quiet(first.at, grant.at)) return false;
    const moves = after.filter((s) => s.kind === "moved");
    const queuedAt = (server: string): Seen[] => after.filter((s) => s.kind === "queued" && s.server === server);
    if (moves.length === 0) return after.every((s) => s.server === grant.server);
    // Moved once, by a hand-over, from the server it queued at to the one that granted: kept for the claim window.
    const moved = moves[0]!;
    if (moves.some((m) => m.server !== moved.server || m.at !== moved.at) || moved.server === grant.server) return false;
    if (after.some((s) => s.kind === "queued" && s.server !== moved.server && s.server !== grant.server)) return false;
    if (queuedAt(moved.server).some((s) => s.at > moved.at)) return false;
    const claimed = queuedAt(grant.server).some((s) => s.at > moved.at && s.at < moved.at + CLAIM_WINDOW_MS);
    return claimed || grant.at < moved.at + CLAIM_WINDOW_MS;
  }
}
