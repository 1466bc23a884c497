import {
  LeaseholdError,
  LIMITS,
  isErrorCode,
  isLeaseholdError,
  type LockBatchLine,
  type LockRequest,
  type LockResponse,
  type LockService,
  type CallOptions,
} from "@leasehold/protocol";
import type { LockBatchCallOptions } from "./http-lock-service.js";
import { cancelledBy } from "./cancelled-by.js";
import { entriesThatFit } from "./batch-fit.js";

/**
 * Most batch calls in transit at once (sent, server not yet started them). Default 4. A batch
 * stays open until its slowest entry resolves (up to a 60 s poll), so counting whole calls, as the
 * other autobatchers do, would let one waiter hold every later lock back; only the transit phase
 * counts. One in transit would serialise the client behind one round-trip; a few let successive
 * batches pipeline over the agent's keep-alive connections while batches stay large under load;
 * more only makes batches smaller (more requests, each parsed and dispatched on its own).
 */
export const MAX_BATCHES_IN_TRANSIT = 4;

/**
 * Queue length from which a batch leaving with nothing in transit takes only half the queue.
 * Default 16. One batch at a time makes the client and the server take turns (each idle while the
 * other works); two halves overlap. A short queue goes whole: a second request has a fixed cost
 * (HTTP head, parse, dispatch) that a few entries do not repay.
 */
export const SPLIT_AT = 16;

/** Options of {@link LockBatcher}. */
export interface LockBatcherOptions {
  readonly service: LockService;
  readonly namespace: string;
  /** Gives back a token granted to an entry whose caller had already given up. */
  readonly release: (tokens: readonly string[]) => void;
  /** Monotonic ms, for what is left of an entry's wait when it is retried alone. */
  readonly now: () => number;
  /**
   * True when the service starts a batch's entries within the `lockBatch` call itself (an
   * in-process service): there is no transit to wait for. Default false.
   */
  readonly inProcess?: boolean;
}

const NO_OPTIONS: CallOptions = {};

type EntryState = "queued" | "batched" | "alone" | "settled";

interface Entry {
  readonly request: LockRequest & { readonly requestId: string };
  readonly signal: AbortSignal | undefined;
  readonly resolve: (answer: LockResponse) => void;
  readonly reject: (err: unknown) => void;
  state: EntryState;
  /** Monotonic ms when its batch left; what is left of its wait is counted from here. */
  sentAt: number;
}

/**
 * Coalesces concurrent `lock` requests of one client into `lock-batch` calls: requests made while
 * batches are in transit queue and leave together, in the order they were made (the server queues
 * a batch's entries in array order, so FIFO per descriptor holds). A request made when nothing is
 * in transit leaves at once (after the current microtask, so callers of the same tick share it).
 * Each caller's promise settles from its own line as it arrives.
 *
 * - **A lone request on an idle client** (nothing else queued, no batch call open, no other lone
 *   request unanswered) goes as a plain `lock` with its `requestId`, over HTTP (not in process):
 *   a batch of one would cost the batch's framing for nothing, and a lone caller must not be
 *   slowed. Requests made while it is out go in batches. Its abort and failures are a single
 *   `lock`'s: the signal aborts the HTTP request, so the server abandons the wait.
 *
 * - **Abort** of one caller rejects it `CANCELLED` at once and sends `lock-cancel` for its
 *   `requestId`, which abandons only that entry; a grant that crossed the cancel is released.
 * - **Disconnect** (the batch call fails without an answer for some entries): each unresolved
 *   entry is retried alone as a single `lock` with the same `requestId` and what is left of its
 *   wait. That is safe: the server keeps a granted entry with a `requestId` and answers the retry
 *   its token, and abandons a waiting one (the retry queues anew). The single `lock` path has the
 *   transport's retries with backoff, so a restarting server is ridden out as without batching.
 * - **An entry answered `UNAVAILABLE`** (the server is shutting down) is retried alone the same way.
 * - **A server without batches** (`NOT_FOUND` before any line): every entry goes as a single
 *   `lock`, and so does every later request of this batcher.
 */
export class LockBatcher {
  readonly #service: LockService;
  readonly #namespace: string;
  readonly #release: (tokens: readonly string[]) => void;
  readonly #now: () => number;
  readonly #inProcess: boolean;
  #queue: Entry[] = [];
  #inTransit = 0;
  /** Batch calls not yet finished plus entries sent alone not yet answered: 0 means this client is idle. */
  #outstanding = 0;
  #drainScheduled = false;
  #supported: boolean;

  constructor(options: LockBatcherOptions) {
    this.#service = options.service;
    this.#namespace = options.namespace;
    this.#release = options.release;
    this.#now = options.now;
    this.#inProcess = options.inProcess ?? false;
    this.#supported = options.service.lockBatch !== undefined;
  }

  /** Whether requests still go in batches (false once the server answered 404 on `lock-batch`). */
  get batching(): boolean {
    return this.#supported;
  }

  /** `LockService.lock`, through a batch when possible. Requests without a `requestId` go alone (they could not be cancelled). */
  lock(namespace: string, request: LockRequest, options: CallOptions = {}): Promise<LockResponse> {
    const { requestId } = request;
    if (!this.#supported || namespace !== this.#namespace || requestId === undefined) {
      return this.#service.lock(namespace, request, options);
    }
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(cancelledBy(signal));
    return new Promise<LockResponse>((resolve, reject) => {
      let cleanup = (): void => undefined;
      const entry: Entry = {
        request: request as LockRequest & { readonly requestId: string },
        signal,
        resolve: (answer) => (cleanup(), resolve(answer)),
        reject: (err) => (cleanup(), reject(err)),
        state: "queued",
        sentAt: 0,
      };
      if (signal !== undefined) {
        const onAbort = (): void => this.#abort(entry, signal);
        signal.addEventListener("abort", onAbort, { once: true });
        cleanup = () => signal.removeEventListener("abort", onAbort);
      }
      this.#queue.push(entry);
      this.#scheduleDrain();
    });
  }

  #scheduleDrain(): void {
    if (this.#drainScheduled) return;
    this.#drainScheduled = true;
    queueMicrotask(() => {
      this.#drainScheduled = false;
      this.#drain();
    });
  }

  #drain(): void {
    if (!this.#inProcess && this.#outstanding === 0 && this.#queue.length === 1) {
      // A lone request on an idle client: a batch of one would only add the batch's framing
      // (measured with one caller doing lock + `tryUnlock`: p50 about 2 µs lower, 25.5–26 µs
      // against 27.5 µs on the benchmark machine).
      this.#alone(this.#queue.pop()!);
      return;
    }
    while (this.#inTransit < MAX_BATCHES_IN_TRANSIT && this.#queue.length > 0) {
      const batch = this.#queue.splice(0, this.#batchSize());
      if (!this.#supported) {
        for (const entry of batch) this.#alone(entry);
        continue;
      }
      this.#inTransit++;
      void this.#send(batch);
    }
  }

  /**
   * How many queued requests the next batch takes. With nothing in transit and a long queue, only
   * half: the two halves then overlap, the server granting one while this process reads the
   * answers of the other, instead of both processes taking turns on one batch.
   */
  #batchSize(): number {
    const queued = this.#queue.length;
    const size = this.#inTransit === 0 && queued >= SPLIT_AT ? Math.ceil(queued / 2) : queued;
    const count = Math.min(size, LIMITS.maxRequestsPerBatch);
    return entriesThatFit(this.#queue, count);
  }

  async #send(batch: readonly Entry[]): Promise<void> {
    this.#outstanding++;
    let arrived = false;
    const started = (): void => {
      if (arrived) return;
      arrived = true;
      this.#inTransit--;
      if (this.#queue.length > 0) this.#scheduleDrain();
    };
    const sentAt = this.#now();
    for (const entry of batch) {
      entry.state = "batched";
      entry.sentAt = sentAt;
    }
    let lines = 0;
    const onLine = (line: LockBatchLine): void => {
      started();
      lines++;
      this.#settle(batch[line.index], line);
    };
    const options: LockBatchCallOptions = { onStarted: started };
    try {
      const call = this.#service.lockBatch!(this.#namespace, { requests: batch.map((e) => e.request) }, onLine, options);
      // An in-process service started every entry inside the call: nothing is in transit.
      if (this.#inProcess) started();
      await call;
      for (const entry of batch) {
        if (entry.state === "batched") this.#fail(entry, new LeaseholdError("BAD_RESPONSE", "lock-batch: the answer ended without a line for this entry"));
      }
    } catch (err) {
      if (isLeaseholdError(err) && err.code === "NOT_FOUND" && lines === 0) {
        // An older server: nothing ran. Every entry, and every later request, goes alone.
        this.#supported = false;
        for (const entry of batch) if (entry.state === "batched") this.#alone(entry);
      } else if (isLeaseholdError(err) && err.code === "UNAVAILABLE") {
        for (const entry of batch) if (entry.state === "batched") this.#alone(entry);
      } else {
        for (const entry of batch) if (entry.state === "batched") this.#fail(entry, err);
      }
    } finally {
      started();
      this.#outstanding--;
    }
  }

  /** Settle an entry from its line; a grant its caller no longer wants is given back. */
  #settle(entry: Entry | undefined, line: LockBatchLine): void {
    if (entry === undefined) return; // an index we never sent: nothing to answer
    const wasBatched = entry.state === "batched";
    if ("result" in line) {
      if (!wasBatched) {
        if (line.result.status === "acquired" && entry.state === "settled") this.#release([line.result.token]);
        return;
      }
      entry.state = "settled";
      entry.resolve(line.result);
      return;
    }
    if (!wasBatched) return;
    const { code, message, details } = line.error;
    if (code === "UNAVAILABLE" || code === "NOT_LEADER") {
      // The server gave the entry up (it is shutting down, or no longer leads the namespace's
      // shard): as a single `lock` answered 503 or 421, it is retried, alone, with the transport's
      // backoff and routing and what is left of its wait.
      this.#alone(entry);
      return;
    }
    this.#fail(entry, isErrorCode(code) ? new LeaseholdError(code, message, details) : new LeaseholdError("BAD_RESPONSE", `lock-batch: unknown error code ${code}`, { code }));
  }

  /**
   * Send the entry as a single `lock` with the same `requestId` and what is left of its wait (all
   * of it for a lone request that never left in a batch), counted as outstanding until answered so
   * that requests made meanwhile go in batches. Its abort and failures are those of a single
   * `lock`: the signal aborts the HTTP request (the server abandons the wait), and the transport
   * retries what it may.
   */
  #alone(entry: Entry): void {
    entry.state = "alone";
    this.#outstanding++;
    const request =
      entry.sentAt === 0
        ? entry.request
        : { ...entry.request, acquireTimeoutMs: Math.max(0, Math.ceil((entry.request.acquireTimeoutMs ?? 0) - (this.#now() - entry.sentAt))) };
    this.#service.lock(this.#namespace, request, entry.signal ? { signal: entry.signal } : NO_OPTIONS).then(
      (answer) => {
        this.#outstanding--;
        if (entry.state !== "alone") return; // aborted meanwhile: acquire-locks' probe releases a racing grant
        entry.state = "settled";
        entry.resolve(answer);
      },
      (err: unknown) => {
        this.#outstanding--;
        if (entry.state === "alone") this.#fail(entry, err);
      },
    );
  }

  #fail(entry: Entry, err: unknown): void {
    entry.state = "settled";
    entry.reject(err);
  }

  #abort(entry: Entry, signal: AbortSignal): void {
    const state = entry.state;
    if (state === "settled") return;
    entry.state = "settled";
    entry.reject(cancelledBy(signal));
    if (state === "queued") {
      this.#queue = this.#queue.filter((e) => e !== entry);
    } else if (state === "batched") {
      // Only this entry: dropping the connection would abandon the whole batch.
      this.#service.cancelLock?.(this.#namespace, { requestId: entry.request.requestId }).catch(() => undefined);
    }
  }
}
