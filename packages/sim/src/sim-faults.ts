import { AIMED, aim, isAimed, type AimHost, type AimedKind } from "./sim-aimed.js";
import { hostCrashAfterGrant } from "./sim-host-crash.js";
import type { SimRandom } from "./sim-random.js";
import type { RunOptions } from "./sim-run.js";
import type { SimWorld } from "./sim-world.js";
import { FAULTS, GRACEFUL, MULTIPLE, STOPS_ONLY, type FaultKind } from "./sim-fault-kinds.js";

/**
 * The fault plan of one seed: from `from` until `until`, one fault at a time (a rolling restart is
 * one fault of several steps), each given time to heal, then until the cluster is protected again
 * (or 8 s went by) and a quiet spell before the next. Each fault's span is recorded in the history
 * with whether it must lose no lock: a single failure of a protected cluster, or a graceful stop
 * of one server with nothing else failing ({@link GRACEFUL}: DESIGN.md "Hand-over with state": at
 * SIGTERM a shard without an in-sync standby first gets one).
 */
export class FaultPlan {
  /** The faults injected, one line each (for the trace). */
  readonly log: string[] = [];
  private failed = 0;
  /** The history's end-setters of failures healed but not yet over (see injectAt). */
  private readonly aftermath: ((at: number) => void)[] = [];
  /** What an aimed fault uses of this plan (sim-aimed.ts). */
  private readonly aimHost: AimHost;

  /**
   * `options` (`RunOptions`' fault switches, each default false: then nothing is drawn for it):
   * `aimed` (`pnpm sim --aimed`): half the faults are aimed at a hand-over's moment (sim-aimed.ts).
   * `blindTaker` (`--blind-taker`, only with `aimed`): the hand-over strikes include `blind` ones.
   * `hostCrashes` (`pnpm sim --host-crashes`): a quarter of the faults host-crash a leader just
   * after it answered a grant (sim-host-crash.ts), and half the crashes are host crashes (what the
   * process sent and has not arrived is lost too: `SimWorld.hostCrash`).
   */
  constructor(
    private readonly world: SimWorld,
    private readonly plan: SimRandom,
    private readonly until: number,
    private readonly options: Pick<RunOptions, "aimed" | "blindTaker" | "hostCrashes"> = {},
  ) {
    this.aimHost = {
      world,
      plan,
      blindTaker: options.blindTaker === true,
      sleep: (ms, label) => this.sleep(ms, label),
      failure: (kind, what) => this.failure(kind, what),
      isolate: (victim, lasts) => this.isolate(victim, lasts, true),
      log: (line) => this.log.push(`${this.now.toFixed(0)} ms: ${line}`),
    };
  }

  /** Begin the plan at `at` (simulated ms). */
  begin(at: number): void {
    void this.injectAt(at);
  }

  private sleep(ms: number, label: string): Promise<void> {
    return new Promise<void>((resolve) => this.world.scheduler.after(ms, "world", label, resolve));
  }

  private get now(): number {
    return this.world.scheduler.now;
  }

  private async injectAt(at: number): Promise<void> {
    const { world, plan } = this;
    if (at >= this.until) return;
    await new Promise<void>((resolve) => world.scheduler.at(at, "world", "fault", resolve));
    const kind: FaultKind | AimedKind = this.options.hostCrashes === true && plan.chance(0.25) ? "host-crash-after-grant" : this.options.aimed === true && plan.chance(0.5) ? plan.pick(AIMED) : plan.pick(FAULTS);
    const ids = world.ids();
    const id = plan.pick(ids);
    const lasts = plan.int(300, 2_500);
    await this.inject(kind, id, lasts);
    // Wait until whole again (or give up after a while), then a quiet spell, then the next fault.
    await this.sleep(200, "healed?");
    for (let waited = 0; waited < 8_000 && !world.rows.protectedNow(); waited += 250) await this.sleep(250, "whole?");
    // A failure's span lasts until the cluster is protected again: a lock granted meanwhile may
    // have had no in-sync standby, and the failure's aftermath (a resumed process acting on rows
    // that moved on) may still take it (DESIGN.md: no lock is lost "when at most one server failed
    // and the shard's standby was in sync"). Graceful stops end at the restart (see failure()).
    for (const end of this.aftermath.splice(0)) end(this.now);
    void this.injectAt(this.now + plan.int(500, 2_500));
  }

  /**
   * Record a failure from now: answers its end. It must lose nothing when it is the only one and
   * the cluster is protected, or when it is a graceful stop with nothing else failing.
   */
  private failure(kind: FaultKind, what: string): () => void {
    const single = this.failed === 0 && !MULTIPLE.has(kind) && (GRACEFUL.has(kind) || this.world.rows.protectedNow());
    this.log.push(`${this.now.toFixed(0)} ms: ${what}${single ? "" : " (may lose locks)"}`);
    this.failed++;
    const end = this.world.history.failed(what, this.now, single, STOPS_ONLY.has(kind));
    return () => {
      this.failed--;
      const restarted = kind === "crash" ? this.now : undefined;
      if (GRACEFUL.has(kind)) end(this.now);
      else this.aftermath.push((to) => end(to, restarted));
    };
  }

  /** Inject one fault; resolves once it healed (the member restarted, the path mended, …). */
  private async inject(kind: FaultKind | AimedKind, id: string, lasts: number): Promise<void> {
    const { world, plan } = this;
    if (isAimed(kind)) return aim(this.aimHost, kind, lasts);
    switch (kind) {
      case "crash": {
        const host = this.options.hostCrashes === true && plan.chance(0.5);
        const heal = this.failure(kind, `${host ? "host crash" : "crash"} of ${id} for ${lasts} ms`);
        if (host) world.hostCrash(id);
        else world.crash(id);
        await this.sleep(lasts, `restart ${id}`);
        world.start(id);
        return heal();
      }
      case "sigterm": {
        const heal = this.failure(kind, `sigterm of ${id}, restarted ${lasts} ms after it stopped`);
        await world.terminate(id);
        await this.sleep(lasts, `restart ${id}`);
        world.start(id);
        return heal();
      }
      case "pause": {
        const heal = this.failure(kind, `pause of ${id} for ${lasts} ms`);
        world.pause(id);
        await this.sleep(lasts, `resume ${id}`);
        world.resume(id);
        return heal();
      }
      case "partition-replication": {
        const other = plan.pick(world.ids().filter((x) => x !== id));
        const heal = this.failure(kind, `replication between ${id} and ${other} cut for ${lasts} ms`);
        const path = world.network.replicationPath(id, other);
        path.cut = true;
        await this.sleep(lasts, "heal replication");
        path.cut = false;
        return heal();
      }
      case "partition-then-crash":
      case "slow-partition-then-crash":
        return this.partitionThenCrash(kind, id, lasts);
      case "cut-database":
      case "slow-database": {
        const path = world.network.databasePath(world.processOf(id)?.name ?? id);
        const slowMs = kind === "slow-database" ? plan.int(50, 400) : 0;
        const heal = this.failure(kind, kind === "cut-database" ? `database cut from ${id} for ${lasts} ms` : `database ${slowMs} ms slower for ${id} for ${lasts} ms`);
        if (kind === "cut-database") path.cut = true;
        else path.slowMs = slowMs;
        await this.sleep(lasts, kind === "cut-database" ? "heal database" : "fast database");
        path.cut = false;
        path.slowMs = 0;
        return heal();
      }
      case "wall-step": {
        const step = plan.pick([-500, -100, 100, 500]);
        const heal = this.failure(kind, `wall clock of ${id} stepped ${step} ms`);
        world.processOf(id)?.stepWall(step);
        return heal();
      }
      case "drift": {
        // Within the documented bound: a clock at most 5% off (the gate's margin absorbs 10%).
        const rate = plan.pick([0.95, 0.97, 1.03, 1.05]);
        const heal = this.failure(kind, `clock of ${id} runs at ${rate} for ${lasts} ms`);
        world.processOf(id)?.drift(rate);
        await this.sleep(lasts, "drift over");
        world.processOf(id)?.drift(1);
        return heal();
      }
      case "rolling-restart":
        return this.rollingRestart(id);
      case "stop-standby-dies":
        return this.stopStandbyDies(lasts);
      case "stop-slow-database":
        return this.stopSlowDatabase(id, lasts);
      case "restart-then-pause":
        return this.restartThenPause(id, lasts);
      case "reset-replication":
        return this.resetReplication(id, lasts);
      case "join":
        return this.join();
      case "twin":
        return this.twin(id, lasts);
      case "isolate":
        return this.isolate(id, lasts);
      case "host-crash-after-grant":
        return hostCrashAfterGrant(this.aimHost, lasts);
    }
  }

  /**
   * Issue 29 item 1's outside check: the replication links of the busiest leader are cut, its
   * clients time out and re-send, and it is killed moments later. `slow-…`: its database path is
   * slowed by a few hundred ms too, so the record of its standby as late (`in_sync = false`) takes
   * that long, and it is killed inside that window (the rule: no grant is answered before it).
   */
  private async partitionThenCrash(kind: FaultKind, id: string, lasts: number): Promise<void> {
    const { world, plan } = this;
    const victim = world.rows.busiestLeader() ?? id;
    const slowMs = kind === "slow-partition-then-crash" ? plan.int(100, 400) : 0;
    // A standby is late after a third of the leader lease; the record then takes a round trip on the slowed path.
    const lateMs = world.settings.leaderLeaseMs / 3;
    const crashAfter = slowMs === 0 ? plan.int(100, 600) : plan.int(Math.floor(lateMs), Math.floor(lateMs + 2 * slowMs + 100));
    const heal = this.failure(kind, `replication of ${victim} (the busiest leader) cut${slowMs > 0 ? `, its database ${slowMs} ms slower` : ""}, crashed ${crashAfter} ms later, restarted ${lasts} ms after that`);
    const paths = world.ids().filter((x) => x !== victim).map((other) => world.network.replicationPath(victim, other));
    for (const path of paths) path.cut = true;
    const database = slowMs > 0 ? world.network.databasePath(world.processOf(victim)?.name ?? victim) : null;
    if (database !== null) database.slowMs = slowMs;
    await this.sleep(crashAfter, `crash ${victim}`);
    world.crash(victim);
    if (database !== null) database.slowMs = 0;
    await this.sleep(lasts, `restart ${victim}`);
    for (const path of paths) path.cut = false;
    world.start(victim);
    heal();
  }

  /**
   * A rolling restart as deploy tools do it: each member in turn gets SIGTERM, is restarted once it
   * exited (after a short downtime), and the next one follows after a short gap, sometimes before
   * the cluster is protected again (a tool that does not wait for `GET /v1/health?protected`). Each
   * stop is its own failure: one server stopped at a time, no crash, so nothing may be lost.
   */
  private async rollingRestart(first: string): Promise<void> {
    const { world, plan } = this;
    const ids = world.ids();
    const start = ids.indexOf(first);
    this.log.push(`${this.now.toFixed(0)} ms: rolling restart from ${first}`);
    for (let k = 0; k < ids.length; k++) {
      const id = ids[(start + k) % ids.length]!;
      const down = plan.int(50, 1_200);
      const heal = this.failure("rolling-restart", `rolling restart: sigterm of ${id}, restarted ${down} ms after it stopped`);
      await world.terminate(id);
      await this.sleep(down, `restart ${id}`);
      world.start(id);
      heal();
      if (k + 1 < ids.length) await this.sleep(plan.int(0, 2_000), "next in the rolling restart");
    }
  }

  /**
   * SIGTERM of the busiest leader, and one of its standbys dies (crashed, or paused for `lasts`)
   * moments later: between its last acknowledgement and the row move of a hand-over, where a
   * hand-over must not complete on an earlier acknowledgement.
   */
  private async stopStandbyDies(lasts: number): Promise<void> {
    const { world, plan } = this;
    const leader = world.rows.busiestLeader();
    const standby = leader === null ? null : world.rows.standbyOf(leader);
    if (leader === null || standby === null) return this.inject("sigterm", leader ?? plan.pick(world.ids()), lasts);
    const crash = plan.chance(0.5);
    const after = plan.int(0, 40);
    const heal = this.failure("stop-standby-dies", `sigterm of ${leader}, its standby ${standby} ${crash ? "crashed" : "paused"} ${after} ms later for ${lasts} ms`);
    const stopped = world.terminate(leader);
    await this.sleep(after, `${crash ? "crash" : "pause"} ${standby}`);
    if (crash) world.crash(standby);
    else world.pause(standby);
    await this.sleep(lasts, `back ${standby}`);
    if (crash) world.start(standby);
    else world.resume(standby);
    await stopped;
    world.start(leader);
    heal();
  }

  /** SIGTERM of a member whose database path is slowed by a few hundred ms: its hand-overs take long (renewed meanwhile). */
  private async stopSlowDatabase(id: string, lasts: number): Promise<void> {
    const { world, plan } = this;
    const slowMs = plan.int(150, 450);
    const heal = this.failure("stop-slow-database", `sigterm of ${id} with its database ${slowMs} ms slower, restarted ${lasts} ms after it stopped`);
    const path = world.network.databasePath(world.processOf(id)?.name ?? id);
    path.slowMs = slowMs;
    await world.terminate(id);
    path.slowMs = 0;
    await this.sleep(lasts, `restart ${id}`);
    world.start(id);
    heal();
  }

  /**
   * A member restarts (or a new one joins) and, once it heartbeats, stops answering for `lasts`
   * (paused): its heartbeat row stays fresh for two leader leases while the others balance shards
   * towards it. Only a member that answers may be a balance target.
   */
  private async restartThenPause(id: string, lasts: number): Promise<void> {
    const { world, plan } = this;
    const joiner = world.joiner();
    const target = joiner ?? id;
    const stall = plan.int(200, 900);
    const heal = this.failure("restart-then-pause", `${joiner !== null ? "join" : "crash and restart"} of ${target}, paused ${stall} ms after it started, for ${lasts} ms`);
    if (joiner !== null) world.join(joiner);
    else {
      world.crash(target);
      await this.sleep(plan.int(50, 500), `restart ${target}`);
      world.start(target);
    }
    await this.sleep(stall, `pause ${target}`);
    world.pause(target);
    await this.sleep(lasts, `resume ${target}`);
    world.resume(target);
    heal();
  }

  /** The replication connections between `id` and another member are reset every 30–300 ms for `lasts` (each reconnects and re-sends). */
  private async resetReplication(id: string, lasts: number): Promise<void> {
    const { world, plan } = this;
    const other = plan.pick(world.ids().filter((x) => x !== id));
    const heal = this.failure("reset-replication", `replication between ${id} and ${other} reset repeatedly for ${lasts} ms`);
    for (const end = this.now + lasts; this.now < end; ) {
      world.network.resetReplication(id, other);
      await this.sleep(plan.int(30, 300), "reset replication");
    }
    heal();
  }

  /** A member not started with the others joins (once a run); it takes its share of shards by balance, which moves tables and loses nothing. */
  private async join(): Promise<void> {
    const joiner = this.world.joiner();
    if (joiner === null) return;
    this.log.push(`${this.now.toFixed(0)} ms: ${joiner} joins`);
    this.world.join(joiner);
    await this.sleep(1_000, "joined");
  }

  /**
   * A partial partition: the busiest leader (or `id`) loses its paths to the database and to every
   * other member at once, while its clients still reach it (they sit on its side of the split), for
   * long enough that its row expires and its in-sync standby takes the shard over (two to four
   * leader leases). One server failed: nothing may be lost when the cluster was protected. The
   * leader's standby is late, and `in_sync = false` cannot be recorded, so by the rule of DESIGN.md
   * "Locks that outlive their leader" the grants waiting for it are never answered.
   */
  private async isolate(id: string, lasts: number, aimedAt = false): Promise<void> {
    const { world } = this;
    const victim = aimedAt ? id : (world.rows.busiestLeader() ?? id);
    const ms = 2 * world.settings.leaderLeaseMs + lasts;
    const heal = this.failure("isolate", `${aimedAt ? `aimed: ${victim}` : `${victim} (the busiest leader)`} cut from the database and the other members for ${ms} ms, its clients still reach it`);
    const paths = world.ids().filter((x) => x !== victim).map((other) => world.network.replicationPath(victim, other));
    const database = world.network.databasePath(world.processOf(victim)?.name ?? victim);
    for (const path of paths) path.cut = true;
    database.cut = true;
    await this.sleep(ms, `reconnect ${victim}`);
    for (const path of paths) path.cut = false;
    database.cut = false;
    heal();
  }

  /** A second process with `id`'s `--server-id` runs beside it for `lasts` (a deploy mistake), then is killed. */
  private async twin(id: string, lasts: number): Promise<void> {
    const heal = this.failure("twin", `a second process with --server-id ${id} for ${lasts} ms`);
    const twin = this.world.startTwin(id);
    await this.sleep(lasts, `kill the twin of ${id}`);
    this.world.crash(twin);
    heal();
  }
}
