import type { IncomingMessage, ServerResponse } from "node:http";
import { LeaseholdError, type HealthResponse } from "@leasehold/protocol";
import { sendJson, type ExtraHeaders } from "../support/send-json.js";
import { queryOf } from "./query-of.js";

/**
 * Serve `GET /v1/health`. With `?protected` (a deploy tool's readiness check, PROTOCOL.md "Cluster
 * mode", Health) the same answer is `200` only when this server says it is protected, and `503
 * UNAVAILABLE` otherwise, with its counts in `details.cluster`: a single server (no standby) and a
 * cluster member with `--replicas 0` never are. Other query parameters are ignored, as a load
 * balancer's probe may add its own.
 */
export async function serveHealth(req: IncomingMessage, res: ServerResponse, health: () => Promise<HealthResponse>, headers: ExtraHeaders): Promise<void> {
  const answer = await health();
  if (queryOf(req.url).has("protected") && answer.cluster?.protected !== true) throw notProtected(answer);
  sendJson(res, 200, answer, headers);
}

function notProtected(answer: HealthResponse): LeaseholdError {
  const c = answer.cluster;
  if (c === undefined) return new LeaseholdError("UNAVAILABLE", "not protected: a single server keeps no standby, so its crash loses every lock (run a cluster with --replicas 1)", {});
  const led = `${c.shardsLedInSync ?? 0} of the ${c.shardsLed} shards it leads have an in-sync standby`;
  const standing = `${c.standbyForInSync ?? 0} of the ${c.standbyFor ?? 0} shards it stands by for are in sync`;
  const why = c.shardsLedInSync === c.shardsLed && c.standbyForInSync === c.standbyFor ? "standbys are off (--replicas 0), or its view of the cluster is older than a leader lease" : `${led}, ${standing}`;
  return new LeaseholdError("UNAVAILABLE", `not protected: ${why}; a crash now could lose locks, wait before restarting another server`, { cluster: c });
}
