import { hostname } from "node:os";
import type { Logger } from "pino";
import { ClusterLockService } from "./cluster-lock-service.js";
import { ClusterMembersView } from "./cluster-members-view.js";
import { ClusterMetrics } from "./cluster-metrics.js";
import { ClusterRuntime } from "./cluster-runtime.js";
import type { ClusterPorts } from "./cluster-ports.js";
import type { Coordinator } from "./coordinator.js";
import { HealthProber } from "./health-prober.js";
import { createPostgresCoordinator } from "./postgres/postgres-coordinator.js";
import { ClusterKeyHolder, loadingClusterKey } from "./replication/cluster-key-holder.js";
import { ReplicationMetrics, type ShardReplicationView } from "./replication/replication-metrics.js";
import { createStandbySide, type StandbySide } from "./replication/standby-side.js";
import { LeaderSide } from "./replication/leader-side.js";
import { ReplicaPromoter } from "./replication/promote-replica.js";
import { testBreaks, type TestBreak, testEchoStandbyPort, testHandOverPauseMs, testReplicationWindow, testReserveBlock, testStandbyFloor } from "./test-breaks.js";

/** Cluster mode options (`startServer({ cluster })`, the CLI's `--cluster` and friends). */
export interface ClusterOptions {
  /**
   * PostgreSQL connection string (node-postgres form). Tables go in schema `leasehold` unless its
   * `options` parameter sets a `search_path` (`?options=-c%20search_path%3Dmy_schema`).
   */
  readonly connectionString: string;
  /**
   * This server's id in the member and lease tables. Default: `<hostname>-<random>`, new at every
   * start. A stable one is safe: rows also carry the process's incarnation (random per start), so a
   * process never takes another's rows for its own, and a second live process with the same id
   * waits as a plain member until the first one's heartbeat lapses (docs/cluster.md).
   */
  readonly serverId?: string | undefined;
  /** The URL clients and other servers reach this one at. Default: the URL it listens on. */
  readonly advertiseUrl?: string | undefined;
  /**
   * How long a shard's leadership lasts without renewal. Default 3,000 ms: a crashed leader's shards
   * are taken over after about this long, and renewals every third of it cost one statement a
   * second per server. Shorter fails over faster but needs PostgreSQL to answer well within a
   * third of it. At least 50.
   */
  readonly leaderLeaseMs?: number | undefined;
  /**
   * Shards of a new cluster. Default: 64 for a new cluster, the stored count for an existing one. A
   * count different from the stored one is refused at start (a namespace's shard would move).
   */
  readonly shards?: number | undefined;
  /**
   * How far ahead of what it hands out a leader stores a namespace's bound. Default 1,000,000: one
   * statement per half million numbers keeps PostgreSQL off the hot path. With
   * {@link ClusterOptions.unsafeTestKnobs} `LEASEHOLD_TEST_RESERVE_BLOCK` sets it when this is not
   * given (test-breaks.ts).
   */
  readonly reserveBlock?: number | undefined;
  /**
   * TEST ONLY (`--unsafe-test-knobs`). Default false. Lets `LEASEHOLD_TEST_BREAK` and
   * `LEASEHOLD_TEST_RESERVE_BLOCK` act (also only at `--log-level debug`): the reliability suite's
   * negative controls switch safety rules off with them to show its checks fire. Off by default,
   * and needed explicitly, so that a stray variable on a production server switches nothing off.
   */
  readonly unsafeTestKnobs?: boolean | undefined;
  /**
   * Hears an error that waiting cannot fix, met while joining after the server already listens
   * because PostgreSQL was unreachable at start (a `--shards` that differs from the cluster's, bad
   * credentials, no such database). The server has logged it at `fatal` and stopped (`close()`)
   * before this is called; the CLI then exits 1. Default: nothing more.
   */
  readonly onFatal?: ((err: Error) => void) | undefined;
  /**
   * Standbys per shard (`--replicas`): 1 streams each led shard's table to a standby (grant answers
   * wait for its acknowledgement), which takes the shard over with every lock when its leader stops
   * (SIGTERM: hand-over) or dies (takeover once its lease expired), same `leaderId`, no lease-wait;
   * 0 turns replication off (a new leader then starts the shard empty and waits out the old
   * leases). Default 1: an in-memory acknowledgement per batch of grants buys locks that survive
   * deploys and single crashes (DESIGN.md "Locks that outlive their leader").
   */
  readonly replicas?: 0 | 1 | undefined;
  /** A coordinator to use instead of PostgreSQL (tests, other stores). Default: PostgreSQL. */
  readonly coordinator?: Coordinator | undefined;
  /**
   * TEST ONLY (with {@link unsafeTestKnobs}): the safety rules to switch off, given directly rather
   * than by `LEASEHOLD_TEST_BREAK` (the simulator runs several servers in one process). Default:
   * whatever `LEASEHOLD_TEST_BREAK` says (test-breaks.ts), normally nothing.
   */
  readonly unsafeTestBreaks?: ReadonlySet<TestBreak> | undefined;
  /** Time, replication connections and member probes (cluster-ports.ts). Default: production's. */
  readonly ports?: ClusterPorts | undefined;
}

/** A cluster member's service and what its host needs to run it. */
export interface ClusterMember {
  readonly service: ClusterLockService;
  readonly runtime: ClusterRuntime;
  readonly metrics: ClusterMetrics;
  readonly serverId: string;
  /** The answer of `GET /v1/cluster/members` (the status page's cluster view); closed with the server. */
  readonly members: ClusterMembersView;
  /** Replication metrics (docs/cluster.md "Metrics"), for the server's registry. */
  readonly replicationMetrics: ReplicationMetrics;
  /** The standby side: replicas of other leaders' shards and the server-to-server route they stream to. */
  readonly standby: StandbySide;
  /** The leader side (`replicas: 1`), `null` with replication off; stopped by the host when it stops. */
  readonly leader: LeaderSide | null;
}

/** Host settings a cluster member shares with a single server. */
export interface ClusterHostSettings {
  readonly leaseMs?: number | undefined;
  readonly validForMs?: number | undefined;
  readonly maxWaitingPerNamespace?: number | undefined;
  readonly watchTtlMs?: number | undefined;
  readonly logger: Logger;
  readonly version: string;
  /** The URL to advertise when `advertiseUrl` is not given (the runtime's `url` can be set later). */
  readonly url: string;
}

/**
 * Build the member and begin joining: connect to the coordinator, create its tables if needed and
 * check the shard count (not leading yet: call `runtime.start()` once the server listens). Throws,
 * with nothing left running, on a bad option or when the first attempt fails for good (a shard-count
 * mismatch, bad credentials, no such database, a malformed connection string). An unreachable or
 * slow database does not throw: the member is answered once the first attempt failed or has run for
 * `max(2 s, leader lease)`, the server listens and answers 503, and joining goes on with backoff.
 */
export async function createClusterMember(options: ClusterOptions, host: ClusterHostSettings): Promise<ClusterMember> {
  const leaderLeaseMs = options.leaderLeaseMs ?? 3_000;
  if (!Number.isSafeInteger(leaderLeaseMs) || leaderLeaseMs < 50) throw new RangeError(`leaderLeaseMs must be an integer of at least 50 (got ${leaderLeaseMs})`);
  const knobs = options.unsafeTestKnobs === true;
  const reserveBlock = options.reserveBlock ?? testReserveBlock(host.logger, knobs) ?? 1_000_000;
  if (!Number.isSafeInteger(reserveBlock) || reserveBlock < 2) throw new RangeError(`reserveBlock must be an integer of at least 2 (got ${reserveBlock})`);
  const serverId = options.serverId ?? `${hostname()}-${globalThis.crypto.randomUUID().slice(0, 8)}`;
  if (options.unsafeTestBreaks !== undefined && !knobs) throw new RangeError("unsafeTestBreaks act only with unsafeTestKnobs: true");
  const breaks = options.unsafeTestBreaks ?? testBreaks(host.logger, knobs);
  let metrics: ClusterMetrics | null = null;
  const key = new ClusterKeyHolder();
  const coordinator = loadingClusterKey(
    options.coordinator ??
    createPostgresCoordinator({
      connectionString: options.connectionString,
      statementTimeoutMs: Math.max(250, Math.floor(leaderLeaseMs / 3)),
      onStatement: (name, seconds, ok) => metrics?.observeStatement(name, seconds, ok),
      unfencedBoundExtensions: breaks.has("epoch-fence"),
      // Test mode only: acquisitions and bound extensions with their database time, for the
      // reliability suite's epoch-fence check (packages/reliability, section 5).
      onCommitted: host.logger.isLevelEnabled("debug") ? (event) => host.logger.debug(event, `${event.kind} committed`) : undefined,
    }),
    key,
  );
  let runtime: ClusterRuntime | null = null;
  let protection: (() => boolean) | null = null;
  metrics = new ClusterMetrics(
    () => runtime?.shardsLed ?? 0,
    () => runtime?.coordinatorDown === null,
    () => protection?.() === true,
  );
  runtime = new ClusterRuntime({
    coordinator,
    shards: options.shards,
    serverId,
    url: options.advertiseUrl ?? host.url,
    leaderLeaseMs,
    leaseMs: host.leaseMs ?? 10_000,
    validForMs: host.validForMs,
    maxWaitingPerNamespace: host.maxWaitingPerNamespace,
    watchTtlMs: host.watchTtlMs,
    reserveBlock,
    logger: host.logger,
    metrics,
    breaks,
    handOverPauseMs: testHandOverPauseMs(host.logger, knobs),
    time: options.ports?.time,
    probe: options.ports?.probe,
  });
  try {
    await runtime.join(Math.max(2_000, leaderLeaseMs));
  } catch (err) {
    await runtime.stop();
    await coordinator.close();
    throw err;
  }
  const service = new ClusterLockService(runtime, coordinator, { serverId, version: host.version });
  protection = () => service.protection().protected;
  if (options.replicas !== undefined && options.replicas !== 0 && options.replicas !== 1) throw new RangeError(`replicas must be 0 or 1 (got ${String(options.replicas)})`);
  let leader: LeaderSide | null = null;
  const replicationMetrics = new ReplicationMetrics((): ShardReplicationView[] => leader?.views() ?? []);
  const r = runtime;
  const standby = createStandbySide({
    serverId,
    incarnation: r.identity.incarnation,
    shards: () => r.shards,
    leases: () => r.leases,
    key,
    logger: host.logger,
    metrics: replicationMetrics,
    leaseMs: host.leaseMs ?? 10_000,
    validForMs: host.validForMs,
    maxWaitingPerNamespace: host.maxWaitingPerNamespace,
    time: options.ports?.time,
    onHandOverEntry: (shard) => r.handOverAcknowledged(shard),
    unsafeFloor: testStandbyFloor(host.logger, knobs),
  });
  if ((options.replicas ?? 1) === 1) {
    const unsafeAnswerFirst = breaks.has("answer-before-ack");
    const unsafeAnyReplica = breaks.has("promote-any-replica");
    const unsafeSnapshotAfterPosition = breaks.has("snapshot-after-position");
    const maxInFlight = testReplicationWindow(host.logger, knobs);
    const echoStandbyPort = testEchoStandbyPort(host.logger, knobs);
    leader = new LeaderSide({ runtime: r, serverId, coordinator, key, leaderLeaseMs, logger: host.logger, metrics: replicationMetrics, standby, unsafeAnswerFirst, unsafeSnapshotAfterPosition, keepStaleReplicas: unsafeAnyReplica, maxInFlight, echoStandbyPort, unprobedStandbys: breaks.has("no-standby-probe"), unprotectedStandbyMoves: breaks.has("move-standby-unprotected"), unsafeUnknownMoveAsFailed: breaks.has("move-unknown-as-failed"), clock: options.ports?.time, connect: options.ports?.connect });
    const dropReplicaOnUnknown = breaks.has("drop-replica-on-unknown");
    const formerReplacesStream = breaks.has("former-replaces-taker-stream");
    r.promoter = new ReplicaPromoter({ store: standby.store, serverId, incarnation: r.identity.incarnation, logger: host.logger, unsafeAnyReplica, dropReplicaOnUnknown, formerReplacesStream });
    const side = leader;
    r.onTermStarted = (term) => side.follow(term);
    leader.start();
  }
  const members = new ClusterMembersView({
    serverId,
    url: () => (runtime as ClusterRuntime).url,
    shardLeaders: () => service.shardLeaders(),
    protection: () => service.protection(),
    readMembers: (withinMs, limit) => coordinator.readMembers(withinMs, limit),
    prober: new HealthProber(),
  });
  return { service, runtime, metrics, serverId, members, replicationMetrics, standby, leader };
}
