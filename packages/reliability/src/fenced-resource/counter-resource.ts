import type { HoldMode, ResourceOperation } from "../history/history-types.js";

/** Who is calling a resource, and with which lock: every operation carries it. */
export interface ResourceAccess {
  /** The holder (one grant) making the call. */
  readonly holder: string;
  /** The fencing token its grant answered for this resource's descriptor. */
  readonly fencingToken: number;
  /** The mode the holder holds. */
  readonly mode: HoldMode;
}

/** A resource's answer: the value read or written, or a refusal naming the highest token seen. */
export type ResourceAnswer =
  | { readonly accepted: true; readonly value: number }
  | { readonly accepted: false; readonly highestSeen: number };

/** Where a resource reports every operation it receives (accepted or refused), e.g. a {@link HistoryRecorder}. */
export interface OperationSink {
  /** Record `op`; the sink numbers it. */
  operation(op: Omit<ResourceOperation, "seq">): unknown;
  /** The clock operations are stamped with. */
  now(): number;
}

/**
 * A counter standing in for storage that one lock descriptor protects. Holders read it under a
 * shared or exclusive lock and increment it (read, then write the value plus one) under an
 * exclusive lock. Operations are synchronous: each is atomic, as one storage request would be.
 */
export interface CounterResource {
  /** The descriptor whose lock protects it. */
  readonly descriptor: string;
  /** The counter now. */
  readonly value: number;
  /** Read the counter. */
  read(access: ResourceAccess): ResourceAnswer;
  /** Set the counter to `value`. */
  write(access: ResourceAccess, value: number): ResourceAnswer;
}
