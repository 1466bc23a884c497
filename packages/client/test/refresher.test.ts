import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { LockClient, type LostLock } from "../src/index.js";
import { captureLogger } from "./support/capture-logger.js";
import { FakeLockService } from "./support/fake-lock-service.js";

// Time itself is the subject here: leases, intervals and tenure, so the clock is fake.
describe("refresher (fake time)", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function setup(options: { maxTenureMs?: number } = {}) {
    const service = new FakeLockService();
    service.validForMs = 1_000;
    const log = captureLogger();
    const client = LockClient.embedded(service, {
      namespace: "ns",
      logger: log.logger,
      now: () => Date.now(),
      refreshTickMs: 50,
      ...options,
    });
    const lost: LostLock[] = [];
    client.lostLocks.subscribe((l) => lost.push(l));
    return { service, client, log, lost };
  }

  it("refreshes all held tokens in one call per half lease", async () => {
    const { service, client } = setup();
    const tokens: string[] = [];
    for (const d of ["a", "b", "c"]) {
      const r = await client.lock([{ descriptor: d, mode: "exclusive" }]);
      if (r.status === "acquired") tokens.push(r.token);
    }
    await vi.advanceTimersByTimeAsync(2_050);
    // 2 s with a 1 s lease: a refresh every 500 ms, each carrying all three tokens.
    expect(service.refreshCalls.length).toBeGreaterThanOrEqual(3);
    expect(service.refreshCalls.length).toBeLessThanOrEqual(5);
    for (const call of service.refreshCalls) expect(new Set(call)).toEqual(new Set(tokens));
    expect(client.stats().refreshCalls).toBe(service.refreshCalls.length);
    await client.close();
  });

  it("a token the server forgot is dropped, reported on lostLocks and logged without its text", async () => {
    const { service, client, lost, log } = setup();
    const r = await client.lock([{ descriptor: "a", mode: "exclusive" }]);
    if (r.status !== "acquired") throw new Error("not acquired");
    service.held.delete(r.token);
    await vi.advanceTimersByTimeAsync(600);
    expect(lost).toEqual([{ token: r.token, reason: "not-refreshed" }]);
    const calls = service.refreshCalls.length;
    await vi.advanceTimersByTimeAsync(2_000);
    expect(service.refreshCalls.length).toBe(calls);
    expect(log.text()).not.toContain(r.token);
    expect(log.lines.some((l) => l.reason === "not-refreshed")).toBe(true);
    await client.close();
  });

  it("a new leaderId voids every held token, with one warning for all of them", async () => {
    const { service, client, lost, log } = setup();
    const tokens: string[] = [];
    for (const d of ["a", "b", "c"]) {
      const r = await client.lock([{ descriptor: d, mode: "exclusive" }]);
      if (r.status === "acquired") tokens.push(r.token);
    }
    service.leaderId = "another-leader"; // the tokens are still in its table: the lease says nothing
    await vi.advanceTimersByTimeAsync(600);
    expect(lost).toEqual(tokens.map((token) => ({ token, reason: "leader-changed" })));
    const warnings = log.lines.filter((l) => l.reason === "leader-changed");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ count: 3 });
    await client.close();
  });

  it("a lease that lapses while refreshes fail is dropped and reported", async () => {
    const { service, client, lost } = setup();
    service.refreshBehavior = "fail";
    const r = await client.lock([{ descriptor: "a", mode: "exclusive" }]);
    if (r.status !== "acquired") throw new Error("not acquired");
    await vi.advanceTimersByTimeAsync(900);
    expect(lost).toEqual([]);
    await vi.advanceTimersByTimeAsync(200);
    expect(lost).toEqual([{ token: r.token, reason: "lease-expired" }]);
    await client.close();
  });

  it("a lease that lapses while a refresh hangs is dropped and reported", async () => {
    const { service, client, lost } = setup();
    service.refreshBehavior = "hang";
    const r = await client.lock([{ descriptor: "a", mode: "exclusive" }]);
    if (r.status !== "acquired") throw new Error("not acquired");
    await vi.advanceTimersByTimeAsync(1_100);
    expect(lost).toEqual([{ token: r.token, reason: "lease-expired" }]);
    service.releaseHangs();
    await client.close();
  });

  it("drops a token held longer than maxTenureMs with a warning", async () => {
    const { client, lost, log } = setup({ maxTenureMs: 3_000 });
    const r = await client.lock([{ descriptor: "a", mode: "exclusive" }]);
    if (r.status !== "acquired") throw new Error("not acquired");
    await vi.advanceTimersByTimeAsync(2_900);
    expect(lost).toEqual([]);
    await vi.advanceTimersByTimeAsync(200);
    expect(lost).toEqual([{ token: r.token, reason: "max-tenure" }]);
    expect(log.lines.some((l) => String(l.msg).includes("maxTenureMs"))).toBe(true);
    await client.close();
  });

  it("close reports held tokens as client-closed and completes lostLocks", async () => {
    const { client, lost } = setup();
    const r = await client.lock([{ descriptor: "a", mode: "exclusive" }]);
    if (r.status !== "acquired") throw new Error("not acquired");
    let completed = false;
    client.lostLocks.subscribe({ complete: () => (completed = true) });
    await client.close();
    expect(lost).toEqual([{ token: r.token, reason: "client-closed" }]);
    expect(completed).toBe(true);
  });
});
