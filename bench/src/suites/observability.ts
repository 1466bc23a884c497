import type { Figure, Suite } from "../figures.js";
import { startServerProcess } from "../server-process.js";
import { quantile, round } from "../stats.js";
import { tryUnlockCost } from "./client.js";

/** The median over rounds of each round's median tryUnlock cost, with the rounds for the note. */
function medianOfRounds(rounds: number[][]): { value: number; each: number[] } {
  const each = rounds.map((costs) => quantile(costs, 0.5));
  return { value: quantile(each, 0.5), each };
}

/**
 * What `@leasehold/opentelemetry` costs `tryUnlock`, side by side in one process and one run:
 * before the package is imported, once it is imported (nothing subscribed), and while it is
 * enabled with the OpenTelemetry SDK's tracer and meter providers (spans created and ended, not
 * exported). The package is imported here dynamically, so nothing has loaded it before the first
 * measurement. Rounds of loaded and enabled alternate, so drift on a shared machine hits both.
 */
export const observabilitySuite: Suite = {
  name: "observability",
  description: "tryUnlock cost without @leasehold/opentelemetry, with it loaded, and with it enabled",
  async run(ctx) {
    const server = await startServerProcess();
    const base = { command: ctx.command, quick: ctx.quick };
    const samples = ctx.quick ? 5_000 : 20_000;
    const rounds = ctx.quick ? 1 : 3;
    try {
      await tryUnlockCost(server.url, samples); // warm-up, discarded
      const absent: number[][] = [];
      for (let r = 0; r < rounds; r++) absent.push(await tryUnlockCost(server.url, samples));

      const { instrumentLeasehold } = await import("@leasehold/opentelemetry");
      const { BasicTracerProvider } = await import("@opentelemetry/sdk-trace-base");
      const { MeterProvider } = await import("@opentelemetry/sdk-metrics");
      const loaded: number[][] = [];
      const enabled: number[][] = [];
      for (let r = 0; r < rounds; r++) {
        loaded.push(await tryUnlockCost(server.url, samples));
        const tracerProvider = new BasicTracerProvider();
        const meterProvider = new MeterProvider();
        const instrumentation = instrumentLeasehold({ tracerProvider, meterProvider });
        try {
          enabled.push(await tryUnlockCost(server.url, samples));
        } finally {
          instrumentation.disable();
          await meterProvider.shutdown();
          await tracerProvider.shutdown();
        }
      }
      const figures: Figure[] = [];
      const add = (name: string, measured: number[][], what: string): void => {
        const { value, each } = medianOfRounds(measured);
        figures.push({ name, value: round(value, 0), unit: "ns", ...base, note: `${what}; median of ${rounds} rounds of ${samples} calls (${each.join(", ")} ns)` });
        ctx.progress(`${name}: ${round(value, 0)} ns (${each.join(", ")})`);
      };
      add("tryunlock_ns_p50_without_otel", absent, "@leasehold/opentelemetry not imported");
      add("tryunlock_ns_p50_otel_loaded", loaded, "@leasehold/opentelemetry imported, not enabled: no subscriber");
      add("tryunlock_ns_p50_otel_enabled", enabled, "instrumentLeasehold() with the SDK's tracer and meter providers: a release message, a hold span ended and a histogram point per call");
      return figures;
    } finally {
      await server.stop();
    }
  },
};
