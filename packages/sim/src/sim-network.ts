import { ReplicationRefusal, type ReplicaStore, type ReplicationAck, type ReplicationMessage, type ReplicationTransport, type StatementLink } from "@leasehold/server/internal";
import type { SimProcess } from "./sim-clock.js";
import type { SimRandom } from "./sim-random.js";

/** The server id a process runs as (its name is `<server id>#<generation>`). */
export function serverOf(process: SimProcess): string {
  return process.name.split("#")[0]!;
}

/** How one member's path to the database behaves now (the fault plan changes it during a run). */
export interface DatabasePath {
  /** Extra one-way delay (ms) on top of the base (a slow database or network). Default 0. */
  slowMs: number;
  /** True while no statement gets through (a partition between this member and PostgreSQL). */
  cut: boolean;
}

/** How one replication path (leader → standby, both directions) behaves now. */
export interface ReplicationPath {
  slowMs: number;
  /** Bytes stop both ways; every connection stays open (the partition of issue 29 item 1). */
  cut: boolean;
  /**
   * Connection resets so far ({@link SimNetwork.resetReplication}): a message or acknowledgement in
   * flight on a connection that was reset since it was sent never arrives.
   */
  resets: number;
}

/**
 * A simulated member's statement timeout (ms): a third of the leader lease, at least 250 ms, as
 * node-postgres's `query_timeout` is set from `--leader-lease-ms`. A statement delayed past it lands
 * after its sender gave up (an aimed fault's `late` strike).
 */
export function statementTimeoutMs(leaderLeaseMs: number): number {
  return Math.max(250, Math.floor(leaderLeaseMs / 3));
}

/** What an aimed fault (`pnpm sim --aimed`, sim-aimed.ts) does to one statement as it is sent. */
export interface StatementFate {
  /** The statement commits (or not) as usual and its answer is lost: the caller sees it time out. */
  readonly answerLost?: boolean | undefined;
  /** Extra one-way delay to the database (ms): the statement may land after its caller gave up. */
  readonly extraDelayMs?: number | undefined;
  /** Called once the statement was applied to the database (bookkeeping: it may look, never act). */
  readonly applied?: (() => void) | undefined;
  /** Every NOTIFY the statement sends is lost (as each may be: ordinary trouble). */
  readonly notifyLost?: boolean | undefined;
  /**
   * The statement never reaches the database (its connection broke on the way: ordinary trouble,
   * as a lost answer is): nothing is applied, and the caller sees it time out, outcome unknown.
   */
  readonly dropped?: boolean | undefined;
}

/** The probabilities of the network's small misfortunes, per message. */
export interface NetworkOdds {
  /** A statement commits and its answer is lost: the caller sees the statement time out. */
  readonly answerLost: number;
  /** A NOTIFY arrives twice. */
  readonly notifyTwice: number;
  /** A NOTIFY never arrives. */
  readonly notifyLost: number;
}

/**
 * The simulated network of one run: each member's path to the in-memory database (statements that
 * take time, commit and lose their answer, time out with their outcome unknown; NOTIFY late, twice
 * or never) and the replication paths between members (slow, cut, re-sent after a failure), all on
 * the seeded scheduler: a message arrives as an event of the receiving process, so a paused
 * process takes it only when resumed, and a dead one never.
 */
export class SimNetwork {
  private readonly databasePaths = new Map<string, DatabasePath>();
  private readonly replicationPaths = new Map<string, ReplicationPath>();
  /** The exchanges in flight on each replication path: a reset fails them at once. */
  private readonly inFlight = new Map<ReplicationPath, Set<(err: Error) => void>>();
  /**
   * Hears each statement as a process sends it, and may change its fate (`pnpm sim --aimed`: a
   * fault waiting for the next statement of a kind, sim-aimed.ts). Default `null`: nothing hears
   * them, and a run's draws are as without it.
   */
  onStatement: ((process: SimProcess, name: string) => StatementFate | undefined) | null = null;
  /** True while a statement whose fate loses its NOTIFYs is being applied. */
  private droppingNotifies = false;
  /** Per process name: the statements whose answers are lost, and until when (see {@link blindAnswers}). */
  private readonly blind = new Map<string, { readonly names: ReadonlySet<string>; readonly until: number }>();

  constructor(
    private readonly random: SimRandom,
    private readonly odds: NetworkOdds,
    /**
     * Hears a standby's replica that could not apply an entry of its leader's stream
     * (`REPLICA_DIVERGED` from the replica store): the standby's copy no longer matches the
     * leader's table, which no fault the simulation injects may cause. Default: nothing.
     */
    private readonly onDiverged: (detail: string) => void = () => undefined,
  ) {}

  /** The path of `member` to the database (made on first use: fast, connected). */
  databasePath(member: string): DatabasePath {
    let path = this.databasePaths.get(member);
    if (path === undefined) this.databasePaths.set(member, (path = { slowMs: 0, cut: false }));
    return path;
  }

  /** The replication path between servers `a` and `b` (their server ids, either order). */
  replicationPath(a: string, b: string): ReplicationPath {
    const key = a < b ? `${a}|${b}` : `${b}|${a}`;
    let path = this.replicationPaths.get(key);
    if (path === undefined) this.replicationPaths.set(key, (path = { slowMs: 0, cut: false, resets: 0 }));
    return path;
  }

  /**
   * Reset every replication connection between `a` and `b` (a proxy or NAT dropping them, a
   * peer's RST): what is in flight on them is lost either way (a message the standby already
   * applied loses only its acknowledgement), each exchange fails at once as a reset connection
   * does, and the sender reconnects and re-sends from its last acknowledgement, so the standby sees
   * frames it already holds again.
   */
  resetReplication(a: string, b: string): void {
    const path = this.replicationPath(a, b);
    path.resets++;
    const failing = this.inFlight.get(path);
    if (failing === undefined) return;
    this.inFlight.delete(path);
    for (const fail of failing) fail(new Error("simulated replication connection reset"));
  }

  /**
   * Lose the answers of the statements named in `names` that the process named `processName`
   * sent, for those the database answers before `until` (simulated ms): an aimed fault's `blind`
   * strike (`pnpm sim --aimed --blind-taker`, sim-aimed.ts), a hand-over's taker learning nothing
   * from its reads of the rows for a while. Each is ordinary trouble, as any answer may be lost:
   * the statement commits (or not) as usual and its caller sees it time out. No draw of the run's
   * randomness is taken or skipped. A later call for the same process replaces the window.
   */
  blindAnswers(processName: string, names: readonly string[], until: number): void {
    this.blind.set(processName, { names: new Set(names), until });
  }

  /** True when the answer of `process`'s statement `name`, answered now, is lost to a {@link blindAnswers} window. */
  private blinded(process: SimProcess, name: string): boolean {
    const window = this.blind.get(process.name);
    if (window === undefined) return false;
    if (process.scheduler.now >= window.until) {
      this.blind.delete(process.name);
      return false;
    }
    return window.names.has(name);
  }

  private delay(extra: number): number {
    return 0.2 + this.random.float() * 1.3 + extra;
  }

  /**
   * `process`'s link to the database: a statement reaches the store after a delay (never while
   * the path is cut), its answer comes back after another (or is lost), and the caller's statement
   * timeout (`timeoutMs`, on its own clock) rejects it first when it takes too long: outcome
   * unknown, as node-postgres's `query_timeout`. A statement whose sender's host crashed before it
   * arrived is never applied ({@link SimProcess.hostCrashed}).
   */
  statementLink(process: SimProcess, timeoutMs: number): StatementLink {
    const path = this.databasePath(process.name);
    const world = process;
    return {
      run: <R>(name: string, apply: () => R): Promise<R> =>
        new Promise<R>((resolve, reject) => {
          const fate = this.onStatement?.(process, name);
          let settled = false;
          const cancelTimeout = world.setTimer(() => {
            if (settled) return;
            settled = true;
            reject(new Error(`simulated statement ${name} timed out after ${timeoutMs} ms (outcome unknown)`));
          }, timeoutMs);
          if (path.cut || fate?.dropped === true) return;
          const there = this.delay(path.slowMs) + (fate?.extraDelayMs ?? 0);
          const back = this.delay(path.slowMs);
          const lost = this.random.chance(this.odds.answerLost) || fate?.answerLost === true;
          world.scheduler.after(there, "database", `${process.name} ${name}`, () => {
            // Its host crashed before the statement arrived: it never left the host's buffers.
            if (process.hostCrashed) return;
            let answer: { ok: true; value: R } | { ok: false; error: unknown };
            this.droppingNotifies = fate?.notifyLost === true;
            try {
              answer = { ok: true, value: apply() };
            } catch (error) {
              answer = { ok: false, error };
            } finally {
              this.droppingNotifies = false;
            }
            fate?.applied?.();
            if (lost || path.cut || this.blinded(process, name)) return;
            world.scheduler.after(back, "database", `answer ${name}`, () =>
              world.deliver(`answer ${name}`, () => {
                if (settled) return;
                settled = true;
                cancelTimeout();
                if (answer.ok) resolve(answer.value);
                else reject(answer.error instanceof Error ? answer.error : new Error(String(answer.error)));
              }),
            );
          });
        }),
      notify: (deliver) => {
        if (path.cut || this.random.chance(this.odds.notifyLost)) return;
        if (this.droppingNotifies) return;
        const times = this.random.chance(this.odds.notifyTwice) ? 2 : 1;
        for (let i = 0; i < times; i++) world.scheduler.after(this.delay(path.slowMs + i * 5), "database", `notify ${process.name}`, () => world.deliver("notify", deliver));
      },
    };
  }

  /**
   * A replication connection from `from` to the standby process `to` (whose replica store is
   * `store()`, `null` while it has none: a refusal as a restarted standby gives). A message crosses
   * as an event of the standby; the acknowledgement as one of the leader. While the path is cut
   * nothing crosses and the send rejects after `timeoutMs` on the leader's clock (outcome unknown:
   * the sender re-sends), as the real stream's request timeout does. A message (or an
   * acknowledgement) whose sender's host crashed before it arrived is lost ({@link SimProcess.hostCrashed}).
   */
  replicationTransport(from: SimProcess, to: SimProcess, store: () => ReplicaStore | null, timeoutMs: number): ReplicationTransport {
    let closed = false;
    // One connection, as the real stream is one TCP connection: messages arrive in the order sent,
    // and so do the acknowledgements (a message never overtakes an earlier one on it).
    let lastArrival = 0;
    let lastAckArrival = 0;
    return {
      send: (message: ReplicationMessage): Promise<ReplicationAck> =>
        new Promise<ReplicationAck>((resolve, reject) => {
          if (closed) return reject(new Error("the simulated replication connection is closed"));
          let settled = false;
          // Paths are between servers (their `--server-id`), whatever process runs each now.
          const path = this.replicationPath(serverOf(from), serverOf(to));
          const connection = path.resets;
          let failing = this.inFlight.get(path);
          if (failing === undefined) this.inFlight.set(path, (failing = new Set()));
          const exchanges = failing;
          const fail = (err: Error): void =>
            from.deliver("replication reset", () => {
              if (settled) return;
              settled = true;
              cancelTimeout();
              reject(err);
            });
          exchanges.add(fail);
          const cancelTimeout = from.setTimer(() => {
            exchanges.delete(fail);
            if (settled) return;
            settled = true;
            reject(new Error(`simulated replication exchange timed out after ${timeoutMs} ms`));
          }, timeoutMs);
          if (path.cut) return;
          const copy = JSON.parse(JSON.stringify(message)) as ReplicationMessage;
          const arrival = Math.max(from.scheduler.now + this.delay(path.slowMs), lastArrival);
          lastArrival = arrival;
          from.scheduler.at(arrival, "network", `replicate ${from.name}->${to.name}`, () => {
            // Arrived or lost as it reaches the standby's host, whenever its process gets to it
            // (a paused standby handles it on resume: a host crash of the sender meanwhile no longer loses it).
            const lostWithHost = from.hostCrashed;
            to.deliver("replication message", () => {
              if (path.cut || path.resets !== connection || lostWithHost) return;
              let answer: { ok: true; ack: ReplicationAck } | { ok: false; error: unknown };
              const target = store();
              try {
                if (target === null) throw new Error("the standby process has no replica store");
                answer = { ok: true, ack: JSON.parse(JSON.stringify(target.receive(copy))) as ReplicationAck };
              } catch (error) {
                answer = { ok: false, error };
                if (error instanceof ReplicationRefusal && error.code === "REPLICA_DIVERGED") this.onDiverged(`${to.name}'s replica of ${from.name}'s stream: ${error.message}`);
              }
              const ackArrival = Math.max(to.scheduler.now + this.delay(path.slowMs), lastAckArrival);
              lastAckArrival = ackArrival;
              to.scheduler.at(ackArrival, "network", `ack ${to.name}->${from.name}`, () => {
                const ackLostWithHost = to.hostCrashed;
                from.deliver("replication ack", () => {
                  exchanges.delete(fail);
                  if (settled || path.cut || path.resets !== connection || ackLostWithHost) return;
                  settled = true;
                  cancelTimeout();
                  if (answer.ok) resolve(answer.ack);
                  else reject(answer.error instanceof Error ? answer.error : new Error(String(answer.error)));
                });
              });
            });
          });
        }),
      close: () => {
        closed = true;
        return Promise.resolve();
      },
    };
  }
}
