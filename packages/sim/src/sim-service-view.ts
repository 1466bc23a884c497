import type { ClusterMember } from "@leasehold/server/internal";
import type { SimService } from "./sim-client.js";

/** The view of each member, made once: calls go straight to its lock service. */
const views = new WeakMap<ClusterMember, SimService>();

/**
 * What the simulated clients and the observer see of a cluster member: its lock service as is,
 * but for {@link SimService.shardLeaders}, which names the lock table a request would run in if it
 * reached this server now. For a shard this server holds a term of, that is the term's table
 * whether or not its serving gate is open: a request that meets a gate closed by time waits in that
 * term for a renewal to reopen it, and is queued there in its order of arrival. The service's own
 * `shardLeaders` (`GET /v1/cluster`) leaves such a term out, as its leadership is unconfirmed; the
 * queue-order check once took a request that arrived during such a closure as arriving when it was
 * granted, and so as overtaking a request that came after it (seed 28215).
 */
export function simServiceOf(member: ClusterMember): SimService {
  let view = views.get(member);
  if (view !== undefined) return view;
  const { service, runtime } = member;
  view = {
    leaderId: service.leaderId,
    shardLeaders: () => service.shardLeaders().map((known, shard) => ({ leaderId: runtime.terms[shard]?.leaderId ?? known.leaderId })),
    beginLock: (namespace, request) => service.beginLock(namespace, request),
    beginWaitForLocks: (namespace, request) => service.beginWaitForLocks(namespace, request),
    refresh: (namespace, request) => service.refresh(namespace, request),
    unlock: (namespace, request) => service.unlock(namespace, request),
    timestamps: (namespace, request) => service.timestamps(namespace, request),
    startTransactions: (namespace, request) => service.startTransactions(namespace, request),
    immutableTimestamp: (namespace, request) => service.immutableTimestamp(namespace, request),
    lockWatches: (namespace, request) => service.lockWatches(namespace, request),
    lockEvents: (namespace, request) => service.lockEvents(namespace, request),
  };
  views.set(member, view);
  return view;
}
