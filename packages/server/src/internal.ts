/**
 * `@leasehold/server/internal`: the cluster's pieces the deterministic simulator (packages/sim)
 * assembles servers from. Not a public API: names and shapes here change with the cluster's
 * internals, without a major version.
 */
export { realProcessClock } from "./cluster/process-clock.js";
export type { ProcessClock } from "./cluster/process-clock.js";
export { MemoryStore } from "./cluster/memory/memory-store.js";
export type { MemoryStoreOptions } from "./cluster/memory/memory-store.js";
export { createMemoryCoordinator, directLink } from "./cluster/memory/memory-coordinator.js";
export type { MemoryCoordinator, MemoryCoordinatorOptions, StatementLink } from "./cluster/memory/memory-coordinator.js";
export type { Coordinator } from "./cluster/coordinator.js";
export type { ReplicationTransport } from "./cluster/replication/replication-sender.js";
export type { ReplicationAck, ReplicationMessage } from "./cluster/replication/replication-wire.js";
export { ReplicationRefusal } from "./cluster/replication/replication-wire.js";
export type { ReplicaStore } from "./cluster/replication/replica-store.js";
export { createClusterMember } from "./cluster/create-cluster-service.js";
export type { ClusterMember, ClusterOptions, ClusterHostSettings } from "./cluster/create-cluster-service.js";
export type { ClusterPorts } from "./cluster/cluster-ports.js";
export type { ClusterLockService } from "./cluster/cluster-lock-service.js";
export { TEST_BREAKS } from "./cluster/test-breaks.js";
export type { TestBreak } from "./cluster/test-breaks.js";
export type { ProbeResult } from "./cluster/health-prober.js";
export type { StandbyTarget } from "./cluster/replication/shard-replication.js";
export { WaitingLockHandle } from "./service/waiting-lock-handle.js";
