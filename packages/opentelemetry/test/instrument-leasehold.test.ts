import { hasSubscribers } from "node:diagnostics_channel";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { context, SpanStatusCode, trace } from "@opentelemetry/api";
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader, type HistogramMetricData, type MetricData } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { CLIENT_CHANNELS, LockClient, tokenFingerprint, type LockResponse } from "@leasehold/client";
import { SERVER_CHANNELS, startServer } from "@leasehold/server";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ATTR, instrumentLeasehold, METRICS, SPANS, type LeaseholdInstrumentationOptions } from "../src/index.js";

const ALL_CHANNELS = [...Object.values(CLIENT_CHANNELS), ...Object.values(SERVER_CHANNELS)];
const contextManager = new AsyncLocalStorageContextManager();
beforeAll(() => void context.setGlobalContextManager(contextManager.enable()));
afterAll(() => {
  context.disable();
});

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** An SDK with in-memory exporters, and leasehold instrumented into it. */
function otel(options: Partial<LeaseholdInstrumentationOptions> = {}) {
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  const instrumentation = instrumentLeasehold({ tracerProvider, meterProvider, ...options });
  cleanups.push(() => instrumentation.disable(), () => meterProvider.shutdown(), () => tracerProvider.shutdown());
  const metric = async (name: string): Promise<MetricData | undefined> => {
    await reader.forceFlush();
    const exported = metricExporter.getMetrics().at(-1);
    return exported?.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === name);
  };
  const finished = (name: string): ReadableSpan[] => spans.getFinishedSpans().filter((s) => s.name === name);
  return { instrumentation, tracerProvider, finished, metric };
}

async function setup(serverOptions: { leaseMs?: number } = {}, clientOptions: { refreshIntervalMs?: number; refreshTickMs?: number } = {}) {
  const server = await startServer(serverOptions);
  cleanups.push(() => server.close());
  const client = LockClient.http({ baseUrl: server.url, namespace: "otel", ...clientOptions });
  cleanups.push(() => client.close());
  return { server, client };
}

const granted = (answer: LockResponse) => {
  if (answer.status !== "acquired") throw new Error(`expected a grant, got ${answer.status}`);
  return answer;
};

const until = async (check: () => boolean | Promise<boolean>, what: string): Promise<void> => {
  const end = Date.now() + 5_000;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

/** The data point of a histogram whose attributes include `attributes`. */
function point(metric: MetricData | undefined, attributes: Record<string, unknown>) {
  const points = (metric as HistogramMetricData | undefined)?.dataPoints ?? [];
  return points.find((p) => Object.entries(attributes).every(([k, v]) => p.attributes[k] === v))?.value;
}

describe("@leasehold/opentelemetry over a real HTTP server", () => {
  it("importing the package subscribes to nothing; disable() unsubscribes from everything", () => {
    for (const name of ALL_CHANNELS) expect(hasSubscribers(name), name).toBe(false);
    const { instrumentation } = otel();
    for (const name of ALL_CHANNELS) expect(hasSubscribers(name), name).toBe(true);
    instrumentation.disable();
    for (const name of ALL_CHANNELS) expect(hasSubscribers(name), name).toBe(false);
  });

  it("a lock then tryUnlock: a wait span and a hold span under the caller's span, wait and hold histograms, the unlock batch size", async () => {
    const { finished, metric, tracerProvider } = otel();
    const { client } = await setup();
    const caller = tracerProvider.getTracer("app").startSpan("handle-request");
    const answer = await context.with(trace.setSpan(context.active(), caller), () =>
      client.lock([{ descriptor: "a", mode: "exclusive" }, { descriptor: "b", mode: "shared" }], { acquireTimeoutMs: 1_000 }),
    );
    const { token } = granted(answer);
    await new Promise((r) => setTimeout(r, 60));
    expect(finished(SPANS.hold)).toHaveLength(0); // still held
    client.tryUnlock([token]);
    caller.end();

    const [wait] = finished(SPANS.wait);
    const [hold] = finished(SPANS.hold);
    expect(wait?.parentSpanContext?.spanId).toBe(caller.spanContext().spanId);
    expect(hold?.parentSpanContext?.spanId).toBe(caller.spanContext().spanId);
    expect(hold?.links.map((l) => l.context.spanId)).toEqual([wait?.spanContext().spanId]);
    expect(wait?.attributes).toMatchObject({ [ATTR.namespace]: "otel", [ATTR.lockCount]: 2, [ATTR.acquireTimeoutMs]: 1_000, [ATTR.outcome]: "acquired", [ATTR.tokenFingerprint]: tokenFingerprint(token) });
    expect(hold?.attributes).toMatchObject({ [ATTR.outcome]: "released", [ATTR.tokenFingerprint]: tokenFingerprint(token) });
    expect(JSON.stringify([wait?.attributes, hold?.attributes])).not.toContain(token);
    const holdMs = (hold?.duration[0] ?? 0) * 1_000 + (hold?.duration[1] ?? 0) / 1e6;
    expect(holdMs).toBeGreaterThanOrEqual(50);

    expect(point(await metric(METRICS.waitTime), { [ATTR.outcome]: "acquired" })).toMatchObject({ count: 1 });
    const holdPoint = point(await metric(METRICS.holdTime), { [ATTR.outcome]: "released" });
    expect(holdPoint?.count).toBe(1);
    expect(holdPoint?.sum).toBeGreaterThanOrEqual(0.05);
    await until(async () => point(await metric(METRICS.unlockBatchSize), { [ATTR.namespace]: "otel" }) !== undefined, "an unlock flush");
    expect(point(await metric(METRICS.unlockBatchSize), { [ATTR.outcome]: "ok" })).toMatchObject({ count: 1, sum: 1 });
  });

  it("unlock batch size: tokens released together are one data point with their count", async () => {
    const { metric } = otel();
    const { client } = await setup();
    const tokens = await Promise.all(["x", "y", "z"].map(async (d) => granted(await client.lock([{ descriptor: d, mode: "exclusive" }])).token));
    client.tryUnlock(tokens);
    await until(async () => point(await metric(METRICS.unlockBatchSize), { [ATTR.outcome]: "ok" }) !== undefined, "an unlock flush");
    expect(point(await metric(METRICS.unlockBatchSize), { [ATTR.outcome]: "ok" })).toMatchObject({ count: 1, sum: 3, max: 3 });
    expect(point(await metric(METRICS.holdTime), { [ATTR.outcome]: "released" })?.count).toBe(3);
  });

  it("a timeout and an error end the wait span with their outcome (the error with status ERROR); no hold span", async () => {
    const { finished, metric } = otel();
    const { client } = await setup();
    const { token } = granted(await client.lock([{ descriptor: "busy", mode: "exclusive" }]));
    expect((await client.lock([{ descriptor: "busy", mode: "exclusive" }], { acquireTimeoutMs: 50 })).status).toBe("timeout");
    await expect(client.lock([{ descriptor: "busy", mode: "nope" as "shared" }])).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    const outcomes = finished(SPANS.wait).map((s) => [s.attributes[ATTR.outcome], s.status.code]);
    expect(outcomes).toEqual([
      ["acquired", SpanStatusCode.UNSET],
      ["timeout", SpanStatusCode.UNSET],
      ["error", SpanStatusCode.ERROR],
    ]);
    expect(finished(SPANS.wait)[2]?.attributes[ATTR.errorCode]).toBe("INVALID_ARGUMENT");
    const timeout = point(await metric(METRICS.waitTime), { [ATTR.outcome]: "timeout" });
    expect(timeout?.count).toBe(1);
    expect(timeout?.sum).toBeGreaterThanOrEqual(0.045);
    client.tryUnlock([token]);
  });

  it("a lost lock ends its hold span with status ERROR and the reason, and counts in leasehold.lock.lost", async () => {
    const { finished, metric } = otel();
    const { client, server } = await setup({}, { refreshIntervalMs: 30, refreshTickMs: 10 });
    const { token } = granted(await client.lock([{ descriptor: "doomed", mode: "exclusive" }]));
    await server.service.unlock("otel", { tokens: [token] }); // freed behind the client's back
    await until(() => finished(SPANS.hold).length === 1, "the hold span to end");
    const [hold] = finished(SPANS.hold);
    expect(hold?.status).toEqual({ code: SpanStatusCode.ERROR, message: "lock lost: not-refreshed" });
    expect(hold?.attributes).toMatchObject({ [ATTR.outcome]: "lost", [ATTR.lostReason]: "not-refreshed" });
    const lost = (await metric(METRICS.lostLocks))?.dataPoints[0];
    expect(lost?.value).toBe(1);
    expect(lost?.attributes[ATTR.lostReason]).toBe("not-refreshed");
  });

  it("server counters: grants at once and after a wait, lease lapses", async () => {
    const { metric } = otel({ client: false, spans: false });
    const { server } = await setup({ leaseMs: 1_000 });
    const lock = (acquireTimeoutMs = 0) =>
      server.service.lock("srv", { locks: [{ descriptor: "d", mode: "exclusive" }], acquireTimeoutMs }).then(granted);
    const first = await lock();
    const second = lock(5_000);
    await server.service.unlock("srv", { tokens: [first.token] });
    await second; // never refreshed: lapses after leaseMs
    await until(async () => ((await metric(METRICS.serverLapses))?.dataPoints[0]?.value ?? 0) === 1, "a lapse");
    const grants = (await metric(METRICS.serverGrants))?.dataPoints ?? [];
    expect(grants.map((p) => [p.attributes[ATTR.waited], p.value]).sort()).toEqual([[false, 1], [true, 1]]);
  });

  it("spans: false records the metrics and starts no span; after disable() nothing is recorded", async () => {
    const { finished, metric, instrumentation } = otel({ spans: false });
    const { client } = await setup();
    client.tryUnlock([granted(await client.lock([{ descriptor: "m", mode: "exclusive" }])).token]);
    expect(finished(SPANS.wait)).toHaveLength(0);
    expect(point(await metric(METRICS.waitTime), { [ATTR.outcome]: "acquired" })?.count).toBe(1);
    instrumentation.disable();
    client.tryUnlock([granted(await client.lock([{ descriptor: "m", mode: "exclusive" }], { acquireTimeoutMs: 1_000 })).token]);
    expect(point(await metric(METRICS.waitTime), { [ATTR.outcome]: "acquired" })?.count).toBe(1);
  });
});
