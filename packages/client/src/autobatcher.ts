import { LeaseholdError, onAbort } from "@leasehold/protocol";
import { cancelledBy } from "./cancelled-by.js";

/**
 * Serves a whole batch of requests with as few service calls as it likes; answers one result per
 * request, in order. It may split the batch to respect the protocol's maxima.
 */
export type BatchFunction<Req, Res> = (requests: readonly Req[]) => Promise<readonly Res[]>;

interface Waiter<Req, Res> {
  readonly request: Req;
  readonly resolve: (value: Res) => void;
  readonly reject: (reason: unknown) => void;
}

/**
 * AtlasDB's autobatcher, small: while one batch call is in flight, new requests queue, and when
 * it returns they all go in the next call. An idle batcher sends at once, so a lone caller pays no
 * latency; under load the number of calls stays at one in flight and batches grow instead.
 *
 * A caller's `signal` only abandons that caller's wait (it rejects with `CANCELLED`); the batch
 * call it may already be part of goes on for the others.
 */
export class Autobatcher<Req, Res> {
  readonly #run: BatchFunction<Req, Res>;
  #queue: Waiter<Req, Res>[] = [];
  #inFlight = false;

  constructor(run: BatchFunction<Req, Res>) {
    this.#run = run;
  }

  /** Submit one request; resolves with its share of a batch's answer. */
  submit(request: Req, options: { readonly signal?: AbortSignal | undefined } = {}): Promise<Res> {
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(cancelledBy(signal, "the call was aborted by its signal"));
    const result = new Promise<Res>((resolve, reject) => {
      this.#queue.push({ request, resolve, reject });
    });
    this.#drain();
    if (signal === undefined) return result;
    return new Promise<Res>((resolve, reject) => {
      // onAbort, not addEventListener: one signal may be shared by many waiting calls.
      const off = onAbort(signal, () => reject(cancelledBy(signal, "the call was aborted by its signal")));
      result.then(resolve, reject).finally(off);
    });
  }

  #drain(): void {
    if (this.#inFlight || this.#queue.length === 0) return;
    const batch = this.#queue;
    this.#queue = [];
    this.#inFlight = true;
    void this.#runBatch(batch).finally(() => {
      this.#inFlight = false;
      this.#drain();
    });
  }

  async #runBatch(batch: readonly Waiter<Req, Res>[]): Promise<void> {
    try {
      const results = await this.#run(batch.map((w) => w.request));
      batch.forEach((waiter, i) => {
        if (i < results.length) waiter.resolve(results[i] as Res);
        else waiter.reject(new LeaseholdError("BAD_RESPONSE", "autobatcher: the batch answered fewer results than requests"));
      });
    } catch (err) {
      for (const waiter of batch) waiter.reject(err);
    }
  }
}
