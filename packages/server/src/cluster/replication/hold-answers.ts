import { WaitingLockHandle } from "../../service/waiting-lock-handle.js";
import { unavailable } from "../cluster-errors.js";
import { ReplicationFencedError } from "./sync-rule.js";
import type { TermReplicator } from "./term-replicator.js";

/** A deposed leader's held answer becomes a 503 the client re-sends to the new leader, never a 500. */
function asUnavailable(err: unknown): never {
  if (err instanceof ReplicationFencedError) throw unavailable("this server no longer leads the namespace's shard; retry", 100);
  throw err;
}

/**
 * Begin a lock (or lock-like) operation of a term whose table is replicated, holding its answer
 * until the standby acknowledged the grant it made (sync-rule.ts): an immediate answer that
 * appended a grant becomes a {@link WaitingLockHandle} that resolves once acknowledged; a waiting
 * one resolves once its grant is. Without a replicator, the operation as it is.
 */
export function holdBegun<A>(replicator: TermReplicator | null, begin: () => A | WaitingLockHandle<A>): A | WaitingLockHandle<A> {
  if (replicator === null) return begin();
  let begun: A | WaitingLockHandle<A> | undefined;
  const held = replicator.hold<A>(() => {
    begun = begin();
    return begun instanceof WaitingLockHandle ? (begun.answer as Promise<A>) : begun;
  });
  if (begun instanceof WaitingLockHandle) return new WaitingLockHandle((held as Promise<A>).catch(asUnavailable), begun.abandon);
  // Granted at once: the client may leave while the acknowledgement is awaited; the host then
  // releases what the undelivered answer granted, as for any answer it could not deliver.
  if (held instanceof Promise) return new WaitingLockHandle(held.catch(asUnavailable), () => undefined, true);
  return held;
}

/** {@link holdBegun} for an operation that answers a promise (transactions/start, timestamp leases). */
export function holdAnswer<A>(replicator: TermReplicator | null, operation: () => Promise<A>): Promise<A> {
  if (replicator === null) return operation();
  return (replicator.hold(operation) as Promise<A>).catch(asUnavailable);
}
