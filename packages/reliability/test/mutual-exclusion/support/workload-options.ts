import type { CounterResource, OperationSink } from "../../../src/fenced-resource/index.js";

/** The shape of one mutual-exclusion run. */
export interface WorkloadOptions {
  /** The server's base URL. */
  readonly baseUrl: string;
  /** A namespace of its own (fencing counters are per namespace). */
  readonly namespace: string;
  /** Concurrent holders, each with its own `LockClient.http`. */
  readonly clients: number;
  /** Lock descriptors (and resources) they share. */
  readonly descriptors: number;
  /** How long holders keep starting new holds, in ms. */
  readonly durationMs: number;
  /** Chance that a hold is exclusive (else shared). */
  readonly exclusiveShare: number;
  /**
   * Every `pauseEvery`-th hold of the run (counting all holders' lock calls) is a simulated GC
   * pause between its first and second operation, alternately exclusive and shared: a schedule
   * rather than a coin, so that a slow machine still gets its share of pauses of both modes.
   */
  readonly pauseEvery: number;
  /** Pause length range in ms, `[min, max)`; chosen well past the server's lease. */
  readonly pauseMs: readonly [number, number];
  /** Longest wait for a lock, in ms. */
  readonly acquireTimeoutMs: number;
  /** Builds the resource standing for one descriptor (fenced, or unfenced for the control). */
  readonly resource: (descriptor: string, sink: OperationSink) => CounterResource;
}
