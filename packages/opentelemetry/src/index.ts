/**
 * `@leasehold/opentelemetry`: OpenTelemetry spans and metrics for leasehold clients and servers,
 * from their `node:diagnostics_channel` events. Call {@link instrumentLeasehold} once.
 */
export { instrumentLeasehold, INSTRUMENTATION_NAME } from "./instrument-leasehold.js";
export type { LeaseholdInstrumentation, LeaseholdInstrumentationOptions } from "./instrument-leasehold.js";
export { SPANS, METRICS, ATTR } from "./names.js";
