import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { metrics, trace, type MeterProvider, type TracerProvider } from "@opentelemetry/api";
import { CLIENT_CHANNELS, SERVER_CHANNELS, type ServerLeaseLapseMessage, type ServerLockGrantMessage } from "@leasehold/protocol";
import { ClientTracker } from "./client-tracker.js";
import { ATTR, METRICS } from "./names.js";

/** The instrumentation scope name of every tracer and meter this package asks for. */
export const INSTRUMENTATION_NAME = "@leasehold/opentelemetry";

/** Options of {@link instrumentLeasehold}; every field is optional. */
export interface LeaseholdInstrumentationOptions {
  /**
   * Where spans go. Default: the global tracer provider (`trace.getTracerProvider()`), so an app
   * that registered the OpenTelemetry SDK needs to pass nothing.
   */
  readonly tracerProvider?: TracerProvider | undefined;
  /** Where metrics go. Default: the global meter provider (`metrics.getMeterProvider()`), as for spans. */
  readonly meterProvider?: MeterProvider | undefined;
  /**
   * Start spans (`leasehold.lock.wait`, `leasehold.lock.hold`). Default `true`. Turn off to keep
   * the metrics alone: a span per lock call is the costliest part, and high-rate lock users may
   * want the histograms only.
   */
  readonly spans?: boolean | undefined;
  /** Listen to the client's channels (`leasehold:client:*`). Default `true`. */
  readonly client?: boolean | undefined;
  /** Listen to the server's channels (`leasehold:server:*`), for a process that embeds the server. Default `true`. */
  readonly server?: boolean | undefined;
}

/** A running instrumentation: call {@link LeaseholdInstrumentation.disable} to stop it. */
export interface LeaseholdInstrumentation {
  /**
   * Unsubscribe from every channel, so the client and server stop building messages (they check
   * for subscribers first), and end the hold spans still open. Idempotent.
   */
  disable(): void;
}

/**
 * Subscribe to leasehold's `node:diagnostics_channel` channels and turn them into OpenTelemetry
 * spans and metrics (README: what each one is). Nothing happens until this is called: importing
 * the package subscribes to nothing, and a leasehold client or server with no subscriber builds
 * no message at all.
 *
 * ```ts
 * import { instrumentLeasehold } from "@leasehold/opentelemetry";
 * const instrumentation = instrumentLeasehold(); // global providers of the registered SDK
 * // … later, on shutdown:
 * instrumentation.disable();
 * ```
 */
export function instrumentLeasehold(options: LeaseholdInstrumentationOptions = {}): LeaseholdInstrumentation {
  const meter = (options.meterProvider ?? metrics.getMeterProvider()).getMeter(INSTRUMENTATION_NAME);
  const tracer = options.spans === false ? undefined : (options.tracerProvider ?? trace.getTracerProvider()).getTracer(INSTRUMENTATION_NAME);
  const subscriptions: Array<[string, (message: unknown) => void]> = [];
  let tracker: ClientTracker | undefined;

  if (options.client !== false) {
    const t = (tracker = new ClientTracker(tracer, meter));
    subscriptions.push(
      [CLIENT_CHANNELS.lockRequest, t.onRequest],
      [CLIENT_CHANNELS.lockGranted, t.onGranted],
      [CLIENT_CHANNELS.lockTimeout, t.onTimeout],
      [CLIENT_CHANNELS.lockCancelled, t.onCancelled],
      [CLIENT_CHANNELS.lockError, t.onError],
      [CLIENT_CHANNELS.lockRelease, t.onRelease],
      [CLIENT_CHANNELS.lockLost, t.onLost],
      [CLIENT_CHANNELS.unlockFlush, t.onUnlockFlush],
      [CLIENT_CHANNELS.refresh, t.onRefresh],
    );
  }
  if (options.server !== false) {
    const grants = meter.createCounter(METRICS.serverGrants, { unit: "{grant}", description: "Lock requests the server granted, at once or after waiting." });
    const lapses = meter.createCounter(METRICS.serverLapses, { unit: "{token}", description: "Tokens the server released because nothing refreshed them in time." });
    subscriptions.push(
      [SERVER_CHANNELS.lockGrant, (m) => grants.add(1, { [ATTR.namespace]: (m as ServerLockGrantMessage).namespace, [ATTR.waited]: (m as ServerLockGrantMessage).waited })],
      [SERVER_CHANNELS.leaseLapse, (m) => lapses.add(1, { [ATTR.namespace]: (m as ServerLeaseLapseMessage).namespace })],
    );
  }
  for (const [name, listener] of subscriptions) subscribe(name, listener);

  let enabled = true;
  return {
    disable(): void {
      if (!enabled) return;
      enabled = false;
      for (const [name, listener] of subscriptions) unsubscribe(name, listener);
      tracker?.endAll();
    },
  };
}
