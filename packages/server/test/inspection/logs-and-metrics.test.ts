import { describe, expect, it } from "vitest";
import { uniqueNamespace, waitFor } from "../support/wait-for.js";
import { capturingLogger, fingerprint, get, lockToken, post, serversClosedAfterEach } from "./inspection-fixture.js";

const start = serversClosedAfterEach();
const requestLines = (lines: Record<string, unknown>[]) => lines.filter((l) => l.msg === "request");

describe("access log", () => {
  it("at debug: one line per request with operation, namespace, status and duration, never a token", async () => {
    const lines: Record<string, unknown>[] = [];
    const server = await start({ logger: capturingLogger(lines, "debug") });
    const ns = uniqueNamespace("log");
    const token = await lockToken(server.url, ns, { locks: [{ descriptor: "d", mode: "exclusive" }] });
    await post(server.url, ns, "unlock", { tokens: [token] });
    await post(server.url, ns, "timestamps", { count: 0 });
    await get(server.url, `/v1/namespaces/${ns}/locks`);
    await waitFor(() => requestLines(lines).length === 4, "four access-log lines");
    const logged = requestLines(lines);
    expect(logged.map((l) => [l.level, l.operation, l.namespace, l.status])).toEqual([
      [20, "lock", ns, 200],
      [20, "unlock", ns, 200],
      [20, "timestamps", ns, 400],
      [20, "locks", ns, 200],
    ]);
    for (const l of logged) {
      expect(typeof l.durationMs).toBe("number");
      expect(l.detail).toBeUndefined();
    }
    expect(JSON.stringify(lines)).not.toContain(token);
  });

  it("at trace: adds what the request carried, tokens as fingerprints", async () => {
    const lines: Record<string, unknown>[] = [];
    const server = await start({ logger: capturingLogger(lines, "trace") });
    const ns = uniqueNamespace("log");
    const token = await lockToken(server.url, ns, { locks: [{ descriptor: "d", mode: "exclusive" }], clientDescription: "tracer" });
    await post(server.url, ns, "unlock", { tokens: [token] });
    await waitFor(() => requestLines(lines).length === 2, "two access-log lines");
    const [lock, unlock] = requestLines(lines);
    expect(lock).toMatchObject({ level: 10, operation: "lock", detail: { descriptors: 1, locks: [{ descriptor: "d", mode: "exclusive" }], clientDescription: "tracer", granted: fingerprint(token) } });
    expect(unlock).toMatchObject({ level: 10, operation: "unlock", detail: { tokens: 1, fingerprints: [fingerprint(token)], unlocked: 1 } });
    expect(JSON.stringify(lines)).not.toContain(token);
  });

  it("at info: no line per request", async () => {
    const lines: Record<string, unknown>[] = [];
    const server = await start({ logger: capturingLogger(lines, "info") });
    const ns = uniqueNamespace("log");
    await lockToken(server.url, ns, { locks: [{ descriptor: "d", mode: "exclusive" }] });
    await get(server.url, "/v1/health");
    expect(requestLines(lines)).toEqual([]);
  });
});

describe("lapse warning", () => {
  it("names the fingerprint, description, descriptor count, first descriptor and how long it was held", async () => {
    const lines: Record<string, unknown>[] = [];
    const server = await start({ leaseMs: 300, logger: capturingLogger(lines, "info") });
    const ns = uniqueNamespace("lapse");
    const token = await lockToken(server.url, ns, { locks: [{ descriptor: "b", mode: "exclusive" }, { descriptor: "a", mode: "shared" }], clientDescription: "billing worker 7 on host-3" });
    await waitFor(() => lines.some((l) => l.msg === "lease lapsed: released a token nobody refreshed in time"), "the lapse warning");
    const warn = lines.find((l) => l.msg === "lease lapsed: released a token nobody refreshed in time")!;
    expect(warn).toMatchObject({ level: 40, namespace: ns, descriptors: 2, fingerprint: fingerprint(token), clientDescription: "billing worker 7 on host-3", firstDescriptor: "a" });
    expect(warn.heldForMs).toBeGreaterThanOrEqual(300);
    expect(JSON.stringify(lines)).not.toContain(token);
  });
});

describe("metrics", () => {
  it("joins prom-client's process and runtime metrics, per-namespace gauges of the busiest N, and hold/wait ages", async () => {
    const server = await start({ leaseMs: 30_000, metricsTopNamespaces: 3 });
    const busy = Array.from({ length: 5 }, (_, i) => `metrics-ns-${i}`);
    // Namespace i holds i + 1 locks, so the busiest three are 4, 3 and 2.
    for (const [i, ns] of busy.entries()) {
      await lockToken(server.url, ns, { locks: Array.from({ length: i + 1 }, (_, k) => ({ descriptor: `d${k}`, mode: "exclusive" as const })) });
    }
    const waiter = post(server.url, busy[0]!, "lock", { locks: [{ descriptor: "d0", mode: "exclusive" }], acquireTimeoutMs: 1_000 });
    await waitFor(() => server.service.snapshot(busy[0]!).waitingRequests === 1, "the waiter");
    await new Promise((r) => setTimeout(r, 50));
    const res = await get(server.url, "/metrics");
    expect(res.status).toBe(200);
    const text = res.text;
    for (const family of ["process_cpu_user_seconds_total", "process_resident_memory_bytes", "nodejs_eventloop_lag_seconds", "nodejs_eventloop_lag_p99_seconds", "nodejs_heap_size_used_bytes", "nodejs_gc_duration_seconds"]) {
      expect(text, family).toContain(`# TYPE ${family} `);
    }
    const held = text.split("\n").filter((l) => l.startsWith("leasehold_namespace_held_locks{"));
    expect(held).toEqual([
      'leasehold_namespace_held_locks{namespace="metrics-ns-4"} 5',
      'leasehold_namespace_held_locks{namespace="metrics-ns-3"} 4',
      'leasehold_namespace_held_locks{namespace="metrics-ns-2"} 3',
    ]);
    expect(text).toContain('leasehold_namespace_waiting_requests{namespace="metrics-ns-4"} 0');
    const value = (name: string): number => Number(/^(\S+) (\S+)$/m.exec(text.split("\n").find((l) => l.startsWith(`${name} `)) ?? "")?.[2]);
    expect(value("leasehold_oldest_hold_seconds")).toBeGreaterThanOrEqual(0.05);
    expect(value("leasehold_longest_wait_seconds")).toBeGreaterThanOrEqual(0.05);
    expect(value("leasehold_longest_wait_seconds")).toBeLessThan(value("leasehold_oldest_hold_seconds"));
    expect(text).toContain("leasehold_revoked_total 0");
    // Every family appears once: the two registries' texts never repeat a name.
    const types = text.split("\n").filter((l) => l.startsWith("# TYPE "));
    expect(new Set(types).size).toBe(types.length);
    await waiter;
  });
});
