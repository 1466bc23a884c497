import type { ClusterMember, ClusterMembersResponse, ClusterShardView, HealthCluster } from "@leasehold/protocol";
import type { ShardLeader } from "./shard-leaders.js";
import type { MemberRow } from "./coordinator.js";
import type { HealthProber, ProbeResult } from "./health-prober.js";

/** What {@link ClusterMembersView} reads, all of it owned by the cluster member. */
export interface ClusterMembersSource {
  /** This server's id. */
  readonly serverId: string;
  /** This server's advertised URL (known once it listens). */
  readonly url: () => string;
  /** Who leads each shard as this server knows it; throws `UNAVAILABLE` before it joined. */
  readonly shardLeaders: () => readonly ShardLeader[];
  /** This server's part of the cluster's protection (its health's `cluster`). Default: none shown. */
  readonly protection?: (() => HealthCluster) | undefined;
  /** The member table (`Coordinator.readMembers`). */
  readonly readMembers: (withinMs: number, limit: number) => Promise<MemberRow[]>;
  /** Probes the others' health routes. */
  readonly prober: HealthProber;
}

/** Options of {@link ClusterMembersView}. */
export interface ClusterMembersViewOptions {
  /**
   * How long one reading of the member table and one round of probes serves every caller.
   * Default 1,500 ms: the status page polls every 2 s, so each open page sees fresh probes, while
   * however many pages (or scripts) poll, a server reads the table and probes each member at most
   * once per this period, and not at all while nobody asks.
   */
  readonly cacheMs?: number | undefined;
  /**
   * Members whose last heartbeat is older than this are no longer listed. Default 15 minutes: long
   * enough that an operator sees a crashed server as "not answering" with when it was last seen,
   * short enough that servers started with a fresh random id on every restart do not pile up (a
   * server stopped cleanly leaves the table at once).
   */
  readonly retentionMs?: number | undefined;
  /** Most members listed. Default 256 (the member table of a sane cluster is far smaller). */
  readonly maxMembers?: number | undefined;
}

/** One reading of the member table and the probes made from it. */
interface Snapshot {
  /** `performance.now()` when it was complete. */
  readonly at: number;
  /** The rows, as read (or the last rows read, when this reading failed). */
  readonly rows: readonly MemberRow[];
  /** `performance.now()` when `rows` were read. */
  readonly rowsAt: number;
  readonly error: string | undefined;
  readonly probes: ReadonlyMap<string, ProbeResult>;
}

/**
 * The answer of `GET /v1/cluster/members` of a cluster member: every shard's leader and every
 * member with whether it answers. The shard view is read fresh at every call (it is in memory);
 * the member table and the probes of the other members' health routes are shared by every call
 * within {@link ClusterMembersViewOptions.cacheMs}, and concurrent calls wait for one reading, so
 * polling pages can never make a server fan out requests per page load. Nothing runs between
 * calls.
 */
export class ClusterMembersView {
  private readonly cacheMs: number;
  private readonly retentionMs: number;
  private readonly maxMembers: number;
  private current: { readonly done: Snapshot | null; readonly pending: Promise<Snapshot> } | null = null;
  private lastRows: { readonly rows: readonly MemberRow[]; readonly at: number } | null = null;

  constructor(
    private readonly source: ClusterMembersSource,
    options: ClusterMembersViewOptions = {},
  ) {
    this.cacheMs = options.cacheMs ?? 1_500;
    this.retentionMs = options.retentionMs ?? 15 * 60_000;
    this.maxMembers = options.maxMembers ?? 256;
    for (const [name, value] of [["cacheMs", this.cacheMs], ["retentionMs", this.retentionMs], ["maxMembers", this.maxMembers]] as const) {
      if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative integer (got ${value})`);
    }
  }

  /** The answer now; rejects only when this server has not joined the cluster yet (`UNAVAILABLE`). */
  async answer(): Promise<ClusterMembersResponse> {
    const leaders = this.source.shardLeaders();
    const snapshot = await this.snapshot();
    const now = performance.now();
    const led = new Map<string, number>();
    for (const l of leaders) if (l.serverId !== null) led.set(l.serverId, (led.get(l.serverId) ?? 0) + 1);
    const own = this.source.protection?.();
    const members: ClusterMember[] = snapshot.rows.map((row) => {
      const self = row.serverId === this.source.serverId;
      const probe: ProbeResult = self ? { answering: true, cluster: own } : (snapshot.probes.get(row.serverId) ?? { answering: false, problem: "not probed yet" });
      const answeredAt = this.source.prober.lastAnswered(row.serverId);
      return {
        serverId: row.serverId,
        url: row.url,
        self,
        ready: row.ready,
        heartbeatAgeMs: Math.round(row.heartbeatAgeMs + (now - snapshot.rowsAt)),
        answering: probe.answering,
        lastAnswerAgeMs: self ? 0 : answeredAt === undefined ? null : Math.round(now - answeredAt),
        ...(probe.problem === undefined ? {} : { problem: probe.problem }),
        shardsLed: led.get(row.serverId) ?? 0,
        ...(probe.cluster === undefined ? {} : { cluster: probe.cluster }),
      };
    });
    if (!members.some((m) => m.self)) {
      // Not in the table (not heartbeating yet, or a second process with this id waits as a plain
      // member): it still answers, so it is listed, without a heartbeat.
      const shardsLed = led.get(this.source.serverId) ?? 0;
      members.push({ serverId: this.source.serverId, url: this.source.url(), self: true, ready: false, heartbeatAgeMs: null, answering: true, lastAnswerAgeMs: 0, shardsLed, ...(own === undefined ? {} : { cluster: own }) });
      members.sort((a, b) => (a.serverId < b.serverId ? -1 : a.serverId > b.serverId ? 1 : 0));
    }
    return {
      serverId: this.source.serverId,
      shards: leaders.length,
      leaders: leaders.map((l) => this.shardView(l, snapshot)),
      members,
      ...(snapshot.error === undefined ? {} : { memberListError: snapshot.error }),
    };
  }

  /**
   * One shard of the answer. Its standby's URL comes from the member table; its lag from the
   * shard's leader, which alone measures it: this server's own for the shards it leads, the
   * leader's `GET /v1/cluster` (read with its probe) for the others, used only when that names the
   * same standby at the same epoch (its in-sync flag is then the leader's, the freshest); `null`
   * when there is no such answer.
   */
  private shardView(l: ShardLeader, snapshot: Snapshot): ClusterShardView {
    const base = { shard: l.shard, leaderServerId: l.serverId, leaderUrl: l.url, epoch: l.epoch };
    const standby = l.standby;
    if (standby === null) return { ...base, standby: null };
    const url = standby.url ?? snapshot.rows.find((r) => r.serverId === standby.serverId)?.url ?? null;
    if (standby.lagEntries !== undefined) return { ...base, standby: { serverId: standby.serverId, url, inSync: standby.inSync, lagEntries: standby.lagEntries, lagMs: standby.lagMs ?? 0 } };
    const fromLeader = l.serverId === null ? undefined : snapshot.probes.get(l.serverId)?.standbys?.get(l.shard);
    const same = fromLeader !== undefined && fromLeader.epoch === l.epoch && fromLeader.standby.serverId === standby.serverId ? fromLeader.standby : undefined;
    if (same === undefined) return { ...base, standby: { serverId: standby.serverId, url, inSync: standby.inSync, lagEntries: null, lagMs: null } };
    return { ...base, standby: { serverId: standby.serverId, url, inSync: same.inSync, lagEntries: same.lagEntries ?? null, lagMs: same.lagMs ?? null } };
  }

  /** Close the prober's connections (the server is stopping). */
  close(): Promise<void> {
    return this.source.prober.close();
  }

  private snapshot(): Promise<Snapshot> {
    const current = this.current;
    if (current !== null && (current.done === null || performance.now() - current.done.at < this.cacheMs)) return current.pending;
    const pending = this.take();
    const entry = { done: null, pending };
    this.current = entry;
    void pending.then((done) => {
      if (this.current === entry) this.current = { done, pending };
    });
    return pending;
  }

  /** Read the member table and probe every other member, in parallel; never rejects. */
  private async take(): Promise<Snapshot> {
    let error: string | undefined;
    try {
      const rows = await this.source.readMembers(this.retentionMs, this.maxMembers);
      this.lastRows = { rows, at: performance.now() };
    } catch (err) {
      error = `cannot read the member table: ${err instanceof Error ? err.message : String(err)}`.slice(0, 512);
    }
    const rows = this.lastRows?.rows ?? [];
    const rowsAt = this.lastRows?.at ?? performance.now();
    const others = rows.filter((r) => r.serverId !== this.source.serverId);
    const results = await Promise.all(others.map((r) => this.source.prober.probe(r.serverId, r.url)));
    this.source.prober.retain(new Set(rows.map((r) => r.serverId)));
    const probes = new Map(others.map((r, i) => [r.serverId, results[i]!] as const));
    return { at: performance.now(), rows, rowsAt, error, probes };
  }
}
