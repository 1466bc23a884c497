import type { OperationKind } from "../history/history-types.js";
import type { CounterResource, OperationSink, ResourceAccess, ResourceAnswer } from "./counter-resource.js";

/**
 * A counter that keeps the highest fencing token it has seen and refuses every operation, read or
 * write, whose token is lower: once a newer holder has used it, an older holder (one whose lease
 * ran out during a pause, say) can neither overwrite the newer holder's work nor read state it is
 * no longer entitled to. An operation with the highest token (the current holder) is accepted.
 * This is the `UPDATE … WHERE fence <= $token` of a real store, done in memory.
 *
 * Tokens of shared holders are compared like any other: a shared reader is refused once a reader
 * granted after it has read. That is the price of one number per resource, and the history checker
 * counts it as what it is (a refusal of an older token), not as a fault.
 */
export class FencedCounter implements CounterResource {
  readonly descriptor: string;
  readonly #sink: OperationSink;
  #value = 0;
  #highest = 0;

  /** @param descriptor - The lock descriptor it stands for. @param sink - Receives every operation. */
  constructor(descriptor: string, sink: OperationSink) {
    this.descriptor = descriptor;
    this.#sink = sink;
  }

  /** The counter now. */
  get value(): number {
    return this.#value;
  }

  /** The highest fencing token any operation has carried so far (0 before the first). */
  get highestSeen(): number {
    return this.#highest;
  }

  /** Read the counter, unless a higher token than `access.fencingToken` has been seen. */
  read(access: ResourceAccess): ResourceAnswer {
    return this.#apply(access, "read", this.#value);
  }

  /** Set the counter to `value`, unless a higher token than `access.fencingToken` has been seen. */
  write(access: ResourceAccess, value: number): ResourceAnswer {
    return this.#apply(access, "write", value);
  }

  /** Whether an operation carrying `fencingToken` is let through: only if no higher token was seen. */
  protected admits(fencingToken: number): boolean {
    return fencingToken >= this.#highest;
  }

  #apply(access: ResourceAccess, kind: OperationKind, value: number): ResourceAnswer {
    const accepted = this.admits(access.fencingToken);
    if (accepted) {
      this.#highest = access.fencingToken;
      if (kind === "write") this.#value = value;
    }
    this.#sink.operation({
      descriptor: this.descriptor,
      holder: access.holder,
      fencingToken: access.fencingToken,
      mode: access.mode,
      kind,
      at: this.#sink.now(),
      accepted,
      value: accepted ? value : this.#value,
    });
    return accepted ? { accepted: true, value } : { accepted: false, highestSeen: this.#highest };
  }
}
