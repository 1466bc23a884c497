import {
  LeaseholdError,
  LIMITS,
  isErrorCode,
  isLeaseholdError,
  onAbort,
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
 * Most batch calls in transit at once (sent, server not yet started them). Default 2. A batch
 * stays open until its slowest entry resolves (up to a 60 s poll), so counting whole calls, as the
 * other autobatchers do, would let one waiter hold every later lock back; only the transit phase
 * counts (it ends at the answer's head, which the server sends at once even when every entry
 * waits). One in transit would serialise the client behind one round-trip; two let the server
 * grant one batch while this process reads the answers of the other.
 *
 * Why not more: callers that get their answers together ask again together, so each batch's
 * callers stay a group round after round. A hiccup that answers one batch piecemeal (the first
 * lock of a namespace on a new cluster leader waits for its bound) used to leave three or four
 * smaller groups for good, and with them a third more requests per lock (measured: 47 against 31
 * `lock-batch` calls per 1,000 locks at 64 callers, and about 10% fewer locks per second). With
 * two in transit a third group waits, and leaves together with the next group that comes back
 * (see {@link LockBatcher}), so the groups merge again.
 */
export const MAX_BATCHES_IN_TRANSIT = 2;

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
  readonly inProcess?: boolean | undefined;
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
 * - **Groups merge.** Requests held back by the transit limit ({@link MAX_BATCHES_IN_TRANSIT})
 *   leave when a batch's answer starts, but only after that turn of the event loop: by then the
 *   callers that read their answers in it have asked again, and all of them leave in one batch. So
 *   64 busy callers settle into two batches of 32 however an earlier hiccup split them.
 * - **A lone request on an idle client** (nothing else queued, no batch call open, no other lone
 *   request unanswered) goes as a plain `lock` with its `requestId`, over HTTP (not in process):
 *   a batch of one would cost the batch's framing for nothing, and a lone caller must not be
 *   slowed. Requests made while it is out go in batches. Its failures are a single `lock`'s;
 *   its abort closes the HTTP request and sends `lock-cancel` (below).
 *
 * - **Abort** of one caller rejects it `CANCELLED` at once and, unless it had not left yet, sends
 *   `lock-cancel` for its `requestId`, which abandons only that entry (batched or alone); a grant
 *   that crossed the cancel is released.
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
  /** Entries of the batches in transit (sent, head not back yet). */
  #inTransitEntries = 0;
  /** Batch calls not yet finished plus entries sent alone not yet answered: 0 means this client is idle. */
  #outstanding = 0;
  #drainScheduled = false;
  #lateDrainScheduled = false;
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
        // onAbort, not addEventListener: one signal may be shared by many waiting calls.
        cleanup = onAbort(signal, () => this.#abort(entry, signal));
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

  /**
   * Drain once this turn of the event loop is done, not in a microtask: requests that waited for a
   * transit slot then leave in one batch with those the callers of the answered batch make as they
   * read their answers (a microtask drain would send the waiting ones first, alone, and keep the two
   * groups apart for good). The wait costs the waiting requests a few microseconds of the round
   * trip they were already waiting out.
   */
  #scheduleLateDrain(): void {
    if (this.#lateDrainScheduled) return;
    this.#lateDrainScheduled = true;
    setImmediate(() => {
      this.#lateDrainScheduled = false;
      if (this.#queue.length > 0) this.#scheduleDrain();
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
      this.#inTransitEntries += batch.length;
      void this.#send(batch);
    }
  }

  /**
   * How many queued requests the next batch takes.
   * - Nothing in transit and a long queue: half. The two halves then overlap, the server granting
   *   one while this process reads the answers of the other, instead of both processes taking turns
   *   on one batch.
   * - A batch in transit and a long queue, longer than that batch: an even share of both, and the
   *   rest waits for the next slot (at most until that batch's head comes back). Groups of callers
   *   keep their sizes round after round, so without this a hiccup that split 64 callers 48/16 left
   *   them so for good, and the pipeline uneven: measured 17% fewer locks per second than 32/32.
   */
  #batchSize(): number {
    const queued = this.#queue.length;
    let size = queued;
    if (queued >= SPLIT_AT) {
      if (this.#inTransit === 0) size = Math.ceil(queued / 2);
      else if (queued > this.#inTransitEntries / this.#inTransit) size = Math.ceil((queued + this.#inTransitEntries) / (this.#inTransit + 1));
    }
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
      this.#inTransitEntries -= batch.length;
      if (this.#queue.length > 0) this.#scheduleLateDrain();
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
   * that requests made meanwhile go in batches. Its failures are those of a single `lock`: the
   * signal aborts the HTTP request (and `#abort` cancels it by `requestId`), and the transport
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
        if (entry.state !== "alone") {
          // Aborted meanwhile (its lock-cancel is on its way): a grant that got here anyway is
          // given back, whoever wins the race.
          if (answer.status === "acquired") this.#release([answer.token]);
          return;
        }
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
    } else {
      // Batched: only this entry (dropping the connection would abandon the whole batch). Alone:
      // the signal closes its connection too, but the server may not have noticed yet, and a
      // grant may be crossing the abort; the cancel settles both (see acquireLocks).
      this.#service.cancelLock?.(this.#namespace, { requestId: entry.request.requestId }).catch(() => undefined);
    }
  }
}
