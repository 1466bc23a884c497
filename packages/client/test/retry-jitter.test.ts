import { describe, expect, it } from "vitest";
import { HttpLockService } from "../src/index.js";
import { fullJitterBackoff } from "../src/full-jitter-backoff.js";
import { retryAfterMs } from "../src/retry-after-ms.js";
import { json, rawHttpServer } from "./support/raw-http-server.js";

describe("full-jitter backoff", () => {
  it("draws each wait in [0, min(cap, base·2^(attempt-1))) from the given random source", () => {
    const base = { baseMs: 100, capMs: 2_000 };
    const ceilings = [100, 200, 400, 800, 1_600, 2_000, 2_000, 2_000];
    for (const [i, ceiling] of ceilings.entries()) {
      expect(fullJitterBackoff(i + 1, { ...base, random: () => 0 })).toBe(0);
      expect(fullJitterBackoff(i + 1, { ...base, random: () => 0.5 })).toBe(ceiling / 2);
      expect(fullJitterBackoff(i + 1, { ...base, random: () => 1 - Number.EPSILON })).toBe(ceiling - 1);
    }
    // No overflow to Infinity or NaN for absurd attempt counts: still capped.
    expect(fullJitterBackoff(5_000, { ...base, random: () => 0.5 })).toBe(1_000);
  });

  it("spreads the waits of many clients over the whole interval, never past the cap", () => {
    const waits = Array.from({ length: 2_000 }, () => fullJitterBackoff(5, { baseMs: 100, capMs: 2_000 }));
    expect(Math.max(...waits)).toBeLessThan(1_600);
    expect(Math.min(...waits)).toBeGreaterThanOrEqual(0);
    // Uniform over [0, 1600): each quarter holds about 500 of 2,000 draws; in step, one would hold all.
    const quarters = [0, 0, 0, 0];
    for (const w of waits) quarters[Math.floor(w / 400)]!++;
    for (const q of quarters) expect(q).toBeGreaterThan(350);
    expect(new Set(waits).size).toBeGreaterThan(500);
  });
});

describe("the HTTP transport's retries", () => {
  it("clients cut off together retry at times drawn from their own random sources, not in step", async () => {
    // A restart seen by 12 clients at once: each client's first four attempts are answered 503.
    const arrivals = new Map<string, number[]>();
    const server = await rawHttpServer((req, _body, res) => {
      const client = String(req.headers["x-client"]);
      const times = [...(arrivals.get(client) ?? []), performance.now()];
      arrivals.set(client, times);
      if (times.length <= 4) json(res, 503, { error: { code: "UNAVAILABLE", message: "restarting" } });
      else json(res, 200, { start: 1, count: 1 });
    });
    const draws = new Map<string, number[]>();
    const services = Array.from({ length: 12 }, (_, i) => {
      const id = `c${i}`;
      draws.set(id, []);
      const random = (): number => {
        const r = Math.random();
        draws.get(id)!.push(r);
        return r;
      };
      return new HttpLockService({ baseUrl: server.url, headers: { "x-client": id }, retry: { maxRetries: 5, minTimeoutMs: 40, maxTimeoutMs: 160, random } });
    });
    try {
      await Promise.all(services.map((s) => s.timestamps("ns", { count: 1 })));
    } finally {
      await Promise.all(services.map((s) => s.close()));
      await server.close();
    }
    const lastWaits: number[] = [];
    for (const [id, times] of arrivals) {
      const drawn = draws.get(id)!;
      // Five attempts; the first retry goes at once, the three after it each sleep a drawn wait.
      expect(times.length).toBe(5);
      expect(drawn.length).toBe(3);
      for (let k = 0; k < drawn.length; k++) {
        const ceiling = Math.min(160, 40 * 2 ** k);
        const wait = Math.floor(drawn[k]! * ceiling);
        // Bounded: the wait was below its ceiling; and it was honoured (timers never fire early).
        expect(wait).toBeLessThan(ceiling);
        expect(times[k + 2]! - times[k + 1]!).toBeGreaterThanOrEqual(wait - 2);
      }
      lastWaits.push(Math.floor(drawn[2]! * 160));
    }
    // Spread: twelve clients cut off at the same moment slept twelve different waits before their
    // last retry (without jitter each sleeps exactly 160 ms). Arrival times themselves are not
    // compared: on a loaded machine connection setup alone scatters them by tens of ms.
    expect(new Set(lastWaits).size).toBeGreaterThanOrEqual(8);
    expect(Math.max(...lastWaits) - Math.min(...lastWaits)).toBeGreaterThan(40);
  });
});

describe("retryAfterMs (one reader of retry-after for the RetryAgent and the cluster transport)", () => {
  it("reads whole seconds and HTTP dates, and nothing else", () => {
    expect(retryAfterMs("2")).toBe(2_000);
    expect(retryAfterMs(["0", "9"])).toBe(0);
    const inFiveSeconds = retryAfterMs(new Date(Date.now() + 5_000).toUTCString());
    expect(inFiveSeconds).toBeGreaterThan(3_000);
    expect(inFiveSeconds).toBeLessThanOrEqual(5_000);
    for (const unreadable of [undefined, "", "-1", "soon", new Date(Date.now() - 60_000).toUTCString()]) expect(retryAfterMs(unreadable), String(unreadable)).toBeUndefined();
  });
});
