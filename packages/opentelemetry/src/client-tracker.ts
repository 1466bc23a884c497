import { context, SpanStatusCode, type Context, type Counter, type Histogram, type Meter, type Span, type Tracer } from "@opentelemetry/api";
import type {
  ClientLockEndMessage,
  ClientLockErrorMessage,
  ClientLockGrantedMessage,
  ClientLockLostMessage,
  ClientLockReleaseMessage,
  ClientLockRequestMessage,
  ClientRefreshMessage,
  ClientUnlockFlushMessage,
} from "@leasehold/protocol";
import { ATTR, METRICS, SPANS } from "./names.js";

/** A lock call in progress: its wait span and the caller's context, for the hold span too. */
interface Wait {
  readonly span: Span | undefined;
  readonly parent: Context;
}

/** A held lock: when it was granted (ms, `performance.now`), its hold span and its namespace. */
interface Hold {
  readonly start: number;
  readonly span: Span | undefined;
  readonly namespace: string;
}

/**
 * Turns the client's diagnostics messages into spans and metrics. A lock call's state is keyed by
 * its `lock:request` message (a `WeakMap`, so a call that never ends leaks nothing); a held lock's
 * by its token fingerprint, until `lock:release` or `lock:lost` ends it.
 */
export class ClientTracker {
  readonly #tracer: Tracer | undefined;
  readonly #waits = new WeakMap<ClientLockRequestMessage, Wait>();
  readonly #holds = new Map<string, Hold>();
  readonly #waitTime: Histogram;
  readonly #holdTime: Histogram;
  readonly #batchSize: Histogram;
  readonly #refreshTime: Histogram;
  readonly #lost: Counter;

  constructor(tracer: Tracer | undefined, meter: Meter) {
    this.#tracer = tracer;
    this.#waitTime = meter.createHistogram(METRICS.waitTime, { unit: "s", description: "How long lock calls took, from the call to its answer, by outcome." });
    this.#holdTime = meter.createHistogram(METRICS.holdTime, { unit: "s", description: "How long locks were held, from the grant to the release (or the loss)." });
    this.#batchSize = meter.createHistogram(METRICS.unlockBatchSize, {
      unit: "{token}",
      description: "Tokens per unlock call of the asynchronous unlocker: how many tryUnlock releases shared one call.",
      advice: { explicitBucketBoundaries: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096, 10_000] },
    });
    this.#refreshTime = meter.createHistogram(METRICS.refreshTime, { unit: "s", description: "How long the client's batched refreshes took." });
    this.#lost = meter.createCounter(METRICS.lostLocks, { unit: "{lock}", description: "Held locks the client gave up without being asked to, by reason." });
  }

  /** Open holds (for tests and for `disable`, which ends them). */
  get openHolds(): number {
    return this.#holds.size;
  }

  readonly onRequest = (message: unknown): void => {
    const m = message as ClientLockRequestMessage;
    const parent = context.active();
    const span = this.#tracer?.startSpan(
      SPANS.wait,
      { attributes: { [ATTR.namespace]: m.namespace, [ATTR.requestId]: m.requestId, [ATTR.lockCount]: m.locks.length, [ATTR.acquireTimeoutMs]: m.acquireTimeoutMs } },
      parent,
    );
    this.#waits.set(m, { span, parent });
  };

  readonly onGranted = (message: unknown): void => {
    const m = message as ClientLockGrantedMessage;
    const wait = this.#end(m, "acquired");
    wait?.span?.setAttribute(ATTR.tokenFingerprint, m.tokenFingerprint);
    wait?.span?.end();
    // The same token again (a retry with the same requestId answered from its grant): one hold.
    if (this.#holds.has(m.tokenFingerprint)) return;
    const span = this.#tracer?.startSpan(
      SPANS.hold,
      { attributes: { [ATTR.namespace]: m.namespace, [ATTR.requestId]: m.requestId, [ATTR.lockCount]: m.acquired.length, [ATTR.tokenFingerprint]: m.tokenFingerprint } },
      wait?.parent ?? context.active(),
    );
    // A wait span links the hold it led to: both are children of the caller's span.
    if (wait?.span !== undefined) span?.addLink({ context: wait.span.spanContext() });
    this.#holds.set(m.tokenFingerprint, { start: performance.now(), span, namespace: m.namespace });
  };

  readonly onTimeout = (message: unknown): void => {
    this.#end(message as ClientLockEndMessage, "timeout")?.span?.end();
  };

  readonly onCancelled = (message: unknown): void => {
    this.#end(message as ClientLockEndMessage, "cancelled")?.span?.end();
  };

  readonly onError = (message: unknown): void => {
    const m = message as ClientLockErrorMessage;
    const span = this.#end(m, "error")?.span;
    span?.setAttribute(ATTR.errorCode, m.code);
    span?.setStatus({ code: SpanStatusCode.ERROR, message: m.code });
    if (m.error instanceof Error) span?.recordException(m.error);
    span?.end();
  };

  readonly onRelease = (message: unknown): void => {
    const m = message as ClientLockReleaseMessage;
    for (const fingerprint of m.tokenFingerprints) this.#endHold(fingerprint, "released", undefined);
  };

  readonly onLost = (message: unknown): void => {
    const m = message as ClientLockLostMessage;
    this.#lost.add(1, { [ATTR.namespace]: m.namespace, [ATTR.lostReason]: m.reason });
    this.#endHold(m.tokenFingerprint, "lost", m.reason);
  };

  readonly onUnlockFlush = (message: unknown): void => {
    const m = message as ClientUnlockFlushMessage;
    this.#batchSize.record(m.batchSize, { [ATTR.namespace]: m.namespace, [ATTR.outcome]: m.errorCode === undefined ? "ok" : "error" });
  };

  readonly onRefresh = (message: unknown): void => {
    const m = message as ClientRefreshMessage;
    this.#refreshTime.record(m.durationMs / 1000, { [ATTR.namespace]: m.namespace, [ATTR.outcome]: m.errorCode === undefined ? "ok" : "error" });
  };

  /** End every open hold span (instrumentation disabled): their release will not be seen. */
  endAll(): void {
    for (const hold of this.#holds.values()) hold.span?.end();
    this.#holds.clear();
  }

  /** Record the wait of a call that ended and forget it; its span is the caller's to finish. */
  #end(m: ClientLockEndMessage, outcome: string): Wait | undefined {
    this.#waitTime.record(m.waitMs / 1000, { [ATTR.namespace]: m.namespace, [ATTR.outcome]: outcome });
    const wait = this.#waits.get(m.request);
    if (wait === undefined) return undefined;
    this.#waits.delete(m.request);
    wait.span?.setAttribute(ATTR.outcome, outcome);
    return wait;
  }

  #endHold(fingerprint: string, outcome: "released" | "lost", reason: string | undefined): void {
    const hold = this.#holds.get(fingerprint);
    if (hold === undefined) return; // granted before the instrumentation, or never granted (a racing grant given back)
    this.#holds.delete(fingerprint);
    this.#holdTime.record((performance.now() - hold.start) / 1000, { [ATTR.namespace]: hold.namespace, [ATTR.outcome]: outcome });
    if (hold.span === undefined) return;
    hold.span.setAttribute(ATTR.outcome, outcome);
    if (reason !== undefined) {
      hold.span.setAttribute(ATTR.lostReason, reason);
      // Losing a lock while holding it is what a caller must hear about; closing the client is not.
      if (reason !== "client-closed") hold.span.setStatus({ code: SpanStatusCode.ERROR, message: `lock lost: ${reason}` });
    }
    hold.span.end();
  }
}
