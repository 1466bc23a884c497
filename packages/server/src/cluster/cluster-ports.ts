import type { ProbeResult } from "./health-prober.js";
import type { ProcessClock } from "./process-clock.js";
import type { ReplicationTransport } from "./replication/replication-sender.js";
import type { StandbyTarget } from "./replication/shard-replication.js";

/**
 * Everything a cluster member reaches outside its own decisions through, besides the
 * `Coordinator` (DESIGN.md "Proving cluster mode: a core without I/O"). Production leaves each
 * unset and gets Node's clocks and timers, the replication stream over TCP and health probes over
 * HTTP; the deterministic simulator (packages/sim) plugs in its own, so a seed replays the same run.
 */
export interface ClusterPorts {
  /** The process's monotonic and wall clocks and its timers. Default: Node's (`realProcessClock`). */
  readonly time?: ProcessClock | undefined;
  /** A replication connection to `target`, the standby of `shard`. Default: the replication stream. */
  readonly connect?: ((target: StandbyTarget, shard: number) => ReplicationTransport) | undefined;
  /** One probe of whether a member answers (balance takers). Default: its `GET /v1/health` over HTTP. */
  readonly probe?: ((serverId: string, url: string) => Promise<ProbeResult>) | undefined;
}
