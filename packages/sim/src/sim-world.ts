import { LeaseholdError } from "@leasehold/protocol";
import {
  createClusterMember,
  createMemoryCoordinator,
  MemoryStore,
  WaitingLockHandle,
  type ClusterMember,
  type ProbeResult,
  type ReplicaStore,
  type TestBreak,
} from "@leasehold/server/internal";
import { SimClient, type SimServers, type SimService } from "./sim-client.js";
import { simServiceOf } from "./sim-service-view.js";
import { SimProcess } from "./sim-clock.js";
import { SimHistory } from "./sim-history.js";
import { simLogger } from "./sim-logger.js";
import { MOVE_BEGIN_LINE, MemberSilence, balanceTargetBoundMs } from "./sim-balance-target.js";
import { SimWatcher } from "./sim-watcher.js";
import { SimNetwork, statementTimeoutMs } from "./sim-network.js";
import { FenceCheckedStore } from "./sim-store-checks.js";
import { LeaseRows } from "./sim-lease-rows.js";
import { simProbe } from "./sim-probe.js";
import type { SimRandom } from "./sim-random.js";
import { Scheduler } from "./scheduler.js";
import { DEFAULT_ODDS, type SimOdds } from "./sim-swarm.js";

/** The shape of one simulated cluster. */
export interface WorldSettings {
  readonly servers: number;
  readonly shards: number;
  readonly leaderLeaseMs: number;
  /** Each server's `--lease-ms` (members may differ). */
  readonly leaseMs: readonly number[];
  readonly breaks: ReadonlySet<TestBreak>;
  /** Members that are not started with the others but may join mid-run ({@link SimWorld.join}). Default 0. */
  readonly joiners?: number | undefined;
  /** The timestamp bound's reservation block (`LEASEHOLD_TEST_RESERVE_BLOCK`: 2 makes nearly every timestamp extend the bound). */
  readonly reserveBlock: number;
  /** The odds of lost answers and NOTIFYs (sim-swarm.ts). Default {@link DEFAULT_ODDS}. */
  readonly odds?: SimOdds | undefined;
  /**
   * The share of clients whose re-sends of a waiting request ask for the whole wait again (the same
   * body, as a generic HTTP retry sends it; `--full-wait-resends`), where leasehold's client asks
   * for what is left. Default 0.
   */
  readonly fullWaitResends?: number | undefined;
}

/** One server slot: its id and URL are fixed (a restart keeps `--server-id`); its process changes. */
interface Slot {
  readonly id: string;
  readonly url: string;
  readonly leaseMs: number;
  generation: number;
  process: SimProcess | null;
  member: ClusterMember | null;
  /** True once its runtime started (it answers calls). */
  listening: boolean;
  /** Calls in flight to it: failed when it crashes. */
  readonly inFlight: Set<(err: Error) => void>;
  /** Clients know its URL (a member started with the others, or one that joined). */
  known: boolean;
  /** A second process started with this `--server-id` (its own URL), `false` for the member itself. */
  readonly twin: boolean;
}


/** A connection error, as a client sees a refused or reset connection. */
function connectionError(what: string): Error {
  return new Error(`simulated connection ${what}`);
}

/**
 * One seeded world: the in-memory database, the network, the server processes (the real cluster
 * code and engine, each on its own {@link SimProcess}), the clients and their history.
 */
export class SimWorld implements SimServers {
  readonly scheduler: Scheduler;
  readonly history = new SimHistory();
  readonly store: MemoryStore;
  /** What the database's lease rows say now, and the `protected-claim` check (sim-lease-rows.ts). */
  readonly rows: LeaseRows;
  readonly network: SimNetwork;
  private readonly slots: Slot[] = [];
  /** The odds of client calls' answers (lost or not). */
  private readonly calls: SimRandom;
  /** The odds of lost answers and NOTIFYs this run draws from. */
  private readonly odds: SimOdds;
  /**
   * Hears each answer a server sends a client (its server id, the call's label, the answer, and
   * whether the request waited in a queue), as it leaves (`--host-crashes`: a strike waits for a
   * grant's answer, sim-faults.ts). Default `null`; it must draw nothing and schedule no event of
   * its own while it only listens.
   */
  onAnswer: ((server: string, label: string, value: unknown, queued: boolean) => void) | null = null;
  /** Which members answer a probe, and since when each that does not has not (the `balance-target` check's truth). */
  private readonly silence = new MemberSilence(() => this.scheduler.now, () => this.slots.flatMap((s) => (s.process === null ? [] : [s.process])));
  /** The servers' logger (sim-logger.ts): written at `LEASEHOLD_SIM_LOG` to debug a seed; each move's begin is observed. */
  private readonly logger = simLogger(() => this.scheduler?.now ?? 0, new Set([MOVE_BEGIN_LINE]), (server, fields) => this.moveBegun(server, fields));

  constructor(
    private readonly random: SimRandom,
    readonly settings: WorldSettings,
    onStep?: (at: number, owner: string, label: string) => void,
  ) {
    this.scheduler = new Scheduler(onStep);
    this.store = new FenceCheckedStore({ now: () => this.scheduler.now, key: Buffer.alloc(32, 7) }, (v) => this.history.violated(v));
    this.rows = new LeaseRows(this.store, () => this.scheduler.now, (v) => this.history.violated(v));
    this.odds = settings.odds ?? DEFAULT_ODDS;
    this.network = new SimNetwork(random.fork("network"), this.odds, (detail) =>
      this.history.violated({ invariant: "replica-divergence", detail: `at ${this.scheduler.now.toFixed(1)}: ${detail}` }),
    );
    this.calls = random.fork("calls");
    for (let i = 0; i < settings.servers + (settings.joiners ?? 0); i++) {
      this.slots.push(this.newSlot(`s${i}`, `http://s${i}.sim`, settings.leaseMs[i % settings.leaseMs.length]!, i < settings.servers, false));
      this.silence.note(`s${i}`, false, "not started");
    }
  }

  private newSlot(id: string, url: string, leaseMs: number, known: boolean, twin: boolean): Slot {
    return { id, url, leaseMs, generation: 0, process: null, member: null, listening: false, inFlight: new Set(), known, twin };
  }

  /** The URLs clients are configured with: the members started with the others, and those that joined. */
  urls(): readonly string[] {
    return this.slots.filter((s) => s.known && !s.twin).map((s) => s.url);
  }

  /** The ids of the members started with the others and of those that joined (the fault plan's targets). */
  ids(): readonly string[] {
    return this.slots.filter((s) => s.known && !s.twin).map((s) => s.id);
  }

  /** The id of a member not started yet that may {@link join}, `null` when none is left. */
  joiner(): string | null {
    return this.slots.find((s) => !s.known && !s.twin)?.id ?? null;
  }

  /** A new member joins the cluster mid-run: clients learn its URL and it starts. */
  join(id: string): void {
    this.slot(id).known = true;
    this.start(id);
  }

  /**
   * Start a second process with server `id`'s `--server-id` (and its own URL) while the first may
   * still run: a deploy mistake. Answers the twin's handle for {@link crash} (its URL).
   */
  startTwin(id: string): string {
    const main = this.slot(id);
    const url = `http://${id}-twin.sim`;
    let twin = this.slots.find((s) => s.url === url);
    if (twin === undefined) this.slots.push((twin = this.newSlot(id, url, main.leaseMs, false, true)));
    this.startSlot(twin);
    return url;
  }

  /** The slot of a member by its URL, or by its id (never a twin's). */
  private slot(idOrUrl: string): Slot {
    const slot = this.slots.find((s) => s.url === idOrUrl) ?? this.slots.find((s) => s.id === idOrUrl && !s.twin);
    if (slot === undefined) throw new Error(`no simulated server ${idOrUrl}`);
    return slot;
  }

  /** True while server `id` runs (not crashed, not stopped). */
  running(id: string): boolean {
    const s = this.slot(id);
    return s.process !== null && s.process.alive;
  }

  /** Server `id`'s process while it runs. */
  processOf(id: string): SimProcess | null {
    const s = this.slot(id);
    return s.process !== null && s.process.alive ? s.process : null;
  }

  /** Start server `id` (a new process with the same `--server-id`). */
  start(id: string): void {
    this.startSlot(this.slot(id));
  }

  private startSlot(slot: Slot): void {
    const id = slot.id;
    if (slot.process !== null && slot.process.alive) return;
    slot.generation++;
    const name = `${id}#${slot.twin ? "t" : ""}${slot.generation}`;
    const rnd = this.random.fork(name);
    // Each process's clocks start anywhere; wall clocks agree within a few ms (NTP).
    const process = new SimProcess(name, this.scheduler, { monoStart: rnd.int(1_000, 1_000_000), wallEpoch: 1_800_000_000_000 + rnd.int(-5, 5) });
    slot.process = process;
    slot.member = null;
    slot.listening = false;
    this.silence.processStarted(process);
    this.heard(id, "starting");
    const { leaderLeaseMs, shards, breaks } = this.settings;
    const coordinator = createMemoryCoordinator({ store: this.store, link: this.network.statementLink(process, statementTimeoutMs(leaderLeaseMs)), unfencedBoundExtensions: breaks.has("epoch-fence") });
    process.deliver("start", () => {
      void createClusterMember(
        {
          connectionString: "postgres://sim/sim",
          serverId: id,
          advertiseUrl: slot.url,
          leaderLeaseMs,
          shards,
          replicas: 1,
          reserveBlock: this.settings.reserveBlock,
          coordinator,
          unsafeTestKnobs: breaks.size > 0,
          unsafeTestBreaks: breaks.size > 0 ? breaks : undefined,
          ports: {
            time: process,
            connect: (target) => this.network.replicationTransport(process, this.processFor(target.url), () => this.replicaStore(target.url), leaderLeaseMs),
            probe: (_serverId, url) => this.probe(process, url),
          },
        },
        { leaseMs: slot.leaseMs, logger: this.logger.child({ server: process.name }), version: "sim", url: slot.url },
      ).then(
        (member) => {
          if (slot.process !== process || !process.alive) return;
          slot.member = member;
          member.runtime.url = slot.url;
          slot.listening = true;
          this.heard(id, "listening");
          void member.runtime.start().catch(() => undefined);
        },
        (err: unknown) => this.history.violated({ invariant: "liveness", detail: `server ${id} could not start: ${String(err)}` }),
      );
    });
  }

  /** SIGKILL: the process and everything it held in memory are gone at once. */
  crash(id: string): void {
    const slot = this.slot(id);
    if (slot.member !== null && slot.process?.alive === true) this.rows.died(slot.member.runtime.identity.incarnation);
    slot.process?.kill();
    slot.listening = false;
    slot.member = null;
    for (const fail of slot.inFlight) fail(connectionError("reset (server crashed)"));
    slot.inFlight.clear();
    this.heard(slot.id, "crashed");
  }

  /**
   * A host crash (power loss, kernel panic; `--host-crashes`): all a {@link crash} does, and what
   * the process sent that has not arrived yet is lost with the host's socket buffers: replication
   * messages and acknowledgements, answers to clients, statements to the database (each is dropped
   * at arrival: {@link SimProcess.hostCrashed}).
   */
  hostCrash(id: string): void {
    const process = this.slot(id).process;
    if (process !== null && process.alive) process.hostCrashed = true;
    this.crash(id);
  }

  /** SIGTERM: the server stops as start-server.ts stops it (hand-overs first), then its process ends. */
  terminate(id: string): Promise<void> {
    const slot = this.slot(id);
    const member = slot.member;
    const process = slot.process;
    if (member === null || process === null || !process.alive) return Promise.resolve();
    slot.listening = false;
    this.heard(id, "stopping");
    return new Promise<void>((resolve) =>
      process.deliver("sigterm", () => {
        void member.service
          .close()
          .then(() => {
            member.leader?.stop();
          })
          .finally(() => {
            this.crash(id);
            resolve();
          });
      }),
    );
  }

  /** Pause server `id` (SIGSTOP, or a VM stopped); {@link resume} lets it go on. */
  pause(id: string): void {
    this.processOf(id)?.pause();
    this.heard(id, "paused");
  }

  /** Let server `id`, paused, go on. */
  resume(id: string): void {
    this.slot(id).process?.resume();
    this.heard(id, "paused");
  }

  /** Server `id` may have begun or stopped answering probes (by `why` when it stopped): tell {@link silence}. */
  private heard(id: string, why: string): void {
    const answers = this.slots.some((s) => s.id === id && s.listening && s.process !== null && s.process.alive && !s.process.holding && !s.process.hostCrashed);
    this.silence.note(id, answers, why);
  }

  /** A server logged a move's begin: a balance move's is recorded with what the world knows of its taker. */
  private moveBegun(server: string, fields: Readonly<Record<string, unknown>>): void {
    const mover = this.slots.find((s) => s.process?.name === server)?.process;
    if (fields.reason !== "balance" || typeof fields.taker !== "string" || mover === undefined || mover === null) return;
    this.history.balanceBegun(this.silence.move(mover, fields.taker, Number(fields.shard), Number(fields.epoch), balanceTargetBoundMs(this.settings.leaderLeaseMs)));
  }

  private processFor(url: string): SimProcess {
    const slot = this.slot(url);
    // A dead process's messages are dropped by the scheduler (its owner is gone).
    return slot.process ?? new SimProcess(`${slot.id}#none`, this.scheduler);
  }

  private replicaStore(url: string): ReplicaStore | null {
    const slot = this.slot(url);
    return slot.member?.standby.store ?? null;
  }

  private probe(from: SimProcess, url: string): Promise<ProbeResult> {
    const slot = this.slot(url);
    return simProbe(this.scheduler, from, slot.id, () => (slot.listening && slot.process !== null && slot.process.alive ? slot.process : null), () => this.silence.answeredProbe(slot.id));
  }

  call<T>(client: string, url: string, label: string, call: (service: SimService) => T | Promise<T> | { readonly answer: Promise<T> }): Promise<T> {
    const slot = this.slot(url);
    return new Promise<T>((resolve, reject) => {
      let done = false;
      const finish = (fn: () => void): void => {
        if (done) return;
        done = true;
        slot.inFlight.delete(fail);
        fn();
      };
      const fail = (err: Error): void => {
        this.scheduler.after(0.5, "network", `reset ${client}`, () => finish(() => reject(err)));
      };
      this.scheduler.after(0.3, "network", `${client} ${label} -> ${slot.id}`, () => {
        const process = slot.process;
        const member = slot.member;
        if (!slot.listening || member === null || process === null || !process.alive) return fail(connectionError("refused"));
        slot.inFlight.add(fail);
        process.deliver(label, () => {
          let settled: Promise<T>;
          // A request that waited in a queue (not one that only waits for a standby's acknowledgement).
          let queued = false;
          try {
            const begun = call(simServiceOf(member));
            queued = begun instanceof WaitingLockHandle && !begun.acknowledging;
            settled = begun instanceof WaitingLockHandle ? (begun.answer as Promise<T>) : Promise.resolve(begun as T | Promise<T>);
          } catch (err) {
            settled = Promise.reject(err);
          }
          settled.then(
            (value) => {
              // The answer is lost on the way (a reset connection, a proxy timing out): the client
              // sees an error some time later and re-sends, the same requestId, maybe elsewhere.
              if (this.calls.chance(this.odds.clientAnswerLost)) {
                this.scheduler.after(this.calls.int(20, 300), "network", `lost answer ${label} -> ${client}`, () => finish(() => reject(connectionError("reset before the answer arrived"))));
                return;
              }
              this.onAnswer?.(slot.id, label, value, queued);
              // An answer from a process whose host crashed before it arrived is lost (the client
              // sees the connection reset: `inFlight`).
              this.scheduler.after(0.3, "network", `answer ${label} -> ${client}`, () => {
                if (!process.hostCrashed) finish(() => resolve(value));
              });
            },
            (err: unknown) =>
              this.scheduler.after(0.3, "network", `error ${label} -> ${client}`, () => {
                if (!process.hostCrashed) finish(() => reject(err instanceof LeaseholdError ? err : connectionError(String(err))));
              }),
          );
        });
      });
    });
  }

  /**
   * Start `count` clients (`c<first>`, `c<first+1>`, …) working on `namespaces` until `until`; the
   * first call (`first` 0) also starts a lock-watch follower of half the namespaces.
   */
  startClients(count: number, namespaces: readonly string[], descriptors: readonly string[], until: number, first = 0): void {
    // Clients whose re-sends ask for the whole wait again: the first of each group, by count, no draw.
    const fullWait = Math.round(count * (this.settings.fullWaitResends ?? 0));
    for (let i = first; i < first + count; i++) {
      const plan = i - first < fullWait ? { namespaces, descriptors, until, fullWaitResends: true } : { namespaces, descriptors, until };
      new SimClient(`c${i}`, this.scheduler, this, this.random.fork(`c${i}`), this.history, plan).start();
    }
    // A lock-watch follower of half the namespaces.
    if (first === 0) new SimWatcher("w0", this.scheduler, this, this.random.fork("w0"), this.history, namespaces.filter((_, i) => i % 2 === 0), until).start();
  }

  /** The cluster member server `id` runs now, `null` while none answers. */
  memberOf(id: string): ClusterMember | null {
    return this.slot(id).member;
  }
}
