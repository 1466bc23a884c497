import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import { InMemoryLockService } from "../../service/in-memory-lock-service.js";
import type { ProcessClock } from "../process-clock.js";
import type { StandbyFloor } from "../test-breaks.js";
import type { ShardLease } from "../coordinator.js";
import type { ClusterKeyHolder } from "./cluster-key-holder.js";
import { ReplicaStore } from "./replica-store.js";
import { ShardReplicaSink } from "./replicated-tables.js";
import type { ReplicationMetrics } from "./replication-metrics.js";
import { createReplicationRoute, type ReplicationAuthOptions } from "./replication-route.js";
import { createReplicationStreamRoute, type ReplicationStreamRoute } from "./replication-stream-route.js";

/** What a member's standby side is made with. */
export interface StandbySideOptions {
  readonly serverId: string;
  /** This process's incarnation (the leader names it in the row; another one refuses). */
  readonly incarnation: string;
  /** The cluster's shard count, `null` before joining. */
  readonly shards: () => number | null;
  /** The lease rows as last read (a message of an older epoch than its shard's row is refused). */
  readonly leases: () => readonly ShardLease[];
  readonly key: ClusterKeyHolder;
  readonly logger: Logger;
  readonly metrics: ReplicationMetrics;
  /** The lock lease and answer settings a replica table serves with once promoted (the member's own). */
  readonly leaseMs: number;
  readonly validForMs?: number | undefined;
  readonly maxWaitingPerNamespace?: number | undefined;
  /** The process's clocks and timers, for the replica tables (their lease clocks). Default: Node's. */
  readonly time?: ProcessClock | undefined;
  /** Hears a shard whose replica just acknowledged its leader's hand-over entry (`ReplicaStoreOptions.onHandOverEntry`). Default: nothing. */
  readonly onHandOverEntry?: ((shard: number) => void) | undefined;
  /** BENCHMARK ONLY, and unsafe: the stream's floor mode (`ReplicationStreamRouteOptions.unsafeFloor`). Default: none, every message applied. */
  readonly unsafeFloor?: StandbyFloor | undefined;
}

/** A member's standby side: its replicas and the route leaders stream to. */
export interface StandbySide {
  readonly store: ReplicaStore;
  /** The replication route: answers and returns true for its paths, false for every other request. */
  readonly route: (req: IncomingMessage, res: ServerResponse) => boolean;
  /** The replication stream (the upgrade leaders connect with): the HTTP server's `upgrade` events go here. */
  readonly stream: ReplicationStreamRoute;
}

/**
 * The standby side of a member: a {@link ReplicaStore} whose replicas are replica lock tables
 * (`InMemoryLockService` started as a replica, under the leader's `leaderId`), behind the
 * replication stream (what leaders use) and the replication route (one message per POST), both
 * authenticated by the cluster key (loaded at join; until then every request is refused).
 */
export function createStandbySide(options: StandbySideOptions): StandbySide {
  const { logger } = options;
  const store = new ReplicaStore({
    incarnation: options.incarnation,
    shards: options.shards,
    rowEpoch: (shard) => options.leases()[shard]?.epoch ?? null,
    onHandOverEntry: options.onHandOverEntry,
    createSink: (stream) =>
      new ShardReplicaSink(
        new InMemoryLockService({
          replica: true,
          leaderId: stream.leaderId,
          serverId: options.serverId,
          leaseMs: options.leaseMs,
          ...(options.validForMs === undefined ? {} : { validForMs: options.validForMs }),
          ...(options.maxWaitingPerNamespace === undefined ? {} : { maxWaitingPerNamespace: options.maxWaitingPerNamespace }),
          logger,
          ...(options.time === undefined ? {} : { clock: () => options.time!.now(), setTimer: (fn: () => void, ms: number) => options.time!.setTimer(fn, ms) }),
        }),
        options.time === undefined ? undefined : () => options.time!.now(),
      ),
  });
  const auth: ReplicationAuthOptions = { key: () => options.key.key, store, logger, onUnauthenticated: (reason) => options.metrics.unauthenticated(reason) };
  const route = createReplicationRoute(auth);
  const stream = createReplicationStreamRoute({ ...auth, unsafeFloor: options.unsafeFloor });
  return { store, route, stream };
}
