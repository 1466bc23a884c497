import type { OperationKind } from "../history/history-types.js";
import type { CounterResource, OperationSink, ResourceAccess, ResourceAnswer } from "./counter-resource.js";

/**
 * The negative control's counter: it records the fencing token of every operation but accepts
 * everything, like a store that trusts the lock alone. A holder that read, paused past its lease
 * and then writes overwrites whatever newer holders wrote meanwhile, so increments get lost.
 */
export class UnfencedCounter implements CounterResource {
  readonly descriptor: string;
  readonly #sink: OperationSink;
  #value = 0;

  /** @param descriptor - The lock descriptor it stands for. @param sink - Receives every operation. */
  constructor(descriptor: string, sink: OperationSink) {
    this.descriptor = descriptor;
    this.#sink = sink;
  }

  /** The counter now. */
  get value(): number {
    return this.#value;
  }

  /** Read the counter; always accepted. */
  read(access: ResourceAccess): ResourceAnswer {
    return this.#apply(access, "read", this.#value);
  }

  /** Set the counter to `value`; always accepted. */
  write(access: ResourceAccess, value: number): ResourceAnswer {
    this.#value = value;
    return this.#apply(access, "write", value);
  }

  #apply(access: ResourceAccess, kind: OperationKind, value: number): ResourceAnswer {
    this.#sink.operation({
      descriptor: this.descriptor,
      holder: access.holder,
      fencingToken: access.fencingToken,
      mode: access.mode,
      kind,
      at: this.#sink.now(),
      accepted: true,
      value,
    });
    return { accepted: true, value };
  }
}
