/** What the waiter-flood child is told (one JSON argument). */
export interface WaiterFloodConfig {
  /** Server base URL. */
  readonly baseUrl: string;
  /** Namespace of the descriptor. */
  readonly namespace: string;
  /** The one descriptor every waiter asks for, exclusively. */
  readonly descriptor: string;
  /** How many waiters, each on its own connection. */
  readonly count: number;
  /** Each waiter's `acquireTimeoutMs` (at most 60,000). */
  readonly acquireTimeoutMs: number;
}

/** How one waiter ended, as the child reports it. Index `i` is its place in the server's queue. */
export interface WaiterOutcome {
  /** Queue position: waiter `i` was sent only after the server had started waiter `i - 1`. */
  readonly i: number;
  /** Fencing token of its grant, when it was granted. */
  readonly fencingToken?: number | undefined;
  /** 0-based order in which grants reached the child. */
  readonly arrival?: number | undefined;
  /** What went wrong instead (an error line, a timeout, a transport error, a failed unlock). */
  readonly error?: string | undefined;
}

/** The child's stdout events, one JSON line each. */
export type WaiterFloodEvent =
  | { readonly event: "queued"; readonly count: number; readonly ms: number; readonly refused: number }
  | { readonly event: "done"; readonly outcomes: readonly WaiterOutcome[]; readonly drainMs: number };

/** The engine-memory child's one event. */
export interface EngineMemoryEvent {
  /** The event's name. */
  readonly event: "engine-memory";
  /** V8 heap used after a full GC with only the holder. */
  readonly heapBefore: number;
  /** The same with `count` requests waiting. */
  readonly heapWaiting: number;
  /** Waiting requests queued. */
  readonly count: number;
  /** What the service's own metrics say is waiting (must equal `count`). */
  readonly waitingRequests: number;
}
