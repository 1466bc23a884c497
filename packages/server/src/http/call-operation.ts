import type {
  CallOptions,
  ImmutableTimestampRequest,
  LockService,
  Operation,
  RefreshRequest,
  StartTransactionsRequest,
  TimestampsRequest,
  UnlockRequest,
} from "@leasehold/protocol";

type Call = (service: LockService, namespace: string, body: unknown, options: CallOptions) => Promise<unknown>;

/*
 * Bodies are passed on unvalidated on purpose: the service validates every request itself (it is
 * also called directly by embedders), so a second check here could only drift from the first.
 */
/** Every operation that answers once; `lock` is not here: it may wait, and the handler serves it through `beginLock`. */
export type SimpleOperation = Exclude<Operation, "lock">;

const CALLS: { readonly [O in SimpleOperation]: Call } = {
  unlock: (s, ns, body, o) => s.unlock(ns, body as UnlockRequest, o),
  refresh: (s, ns, body, o) => s.refresh(ns, body as RefreshRequest, o),
  timestamps: (s, ns, body, o) => s.timestamps(ns, body as TimestampsRequest, o),
  "transactions/start": (s, ns, body, o) => s.startTransactions(ns, body as StartTransactionsRequest, o),
  "immutable-timestamp": (s, ns, body, o) => s.immutableTimestamp(ns, body as ImmutableTimestampRequest, o),
};

/** Call the service method of `operation` with a parsed JSON body. */
export function callOperation(
  service: LockService,
  operation: SimpleOperation,
  namespace: string,
  body: unknown,
  options: CallOptions,
): Promise<unknown> {
  return CALLS[operation](service, namespace, body, options);
}
