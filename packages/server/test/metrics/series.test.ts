import { describe, expect, it } from "vitest";
import { Counter } from "../../src/metrics/counter.js";
import { Histogram } from "../../src/metrics/histogram.js";

describe("metric series keys", () => {
  it("a counter keeps one series per label set, whatever the order the labels were written in", () => {
    const c = new Counter("t_requests_total", "test", ["operation", "status"]);
    c.inc({ operation: "lock", status: "200" });
    c.inc({ status: "200", operation: "lock" } as { operation: string; status: string }, 2);
    c.inc({ operation: "lock", status: "400" });
    c.inc({ operation: "lock2", status: "00" }); // a value that would collide if keys were concatenated without a separator
    expect(c.get({ operation: "lock", status: "200" })).toBe(3);
    expect(c.get({ operation: "lock", status: "400" })).toBe(1);
    expect(c.get({ operation: "lock2", status: "00" })).toBe(1);
    expect(c.get({ operation: "unlock", status: "200" })).toBe(0);
    expect(c.samples().sort()).toEqual([
      't_requests_total{operation="lock",status="200"} 3',
      't_requests_total{operation="lock",status="400"} 1',
      't_requests_total{operation="lock2",status="00"} 1',
    ]);
  });

  it("a histogram keeps one series per label set and only the declared labels", () => {
    const h = new Histogram("t_seconds", "test", ["operation"], [0.001, 0.01]);
    h.observe({ operation: "lock" }, 0.0005);
    h.observe({ operation: "lock", extra: "ignored" } as { operation: string }, 0.005);
    h.observe({ operation: "unlock" }, 1);
    const samples = h.samples();
    expect(samples).toContain('t_seconds_count{operation="lock"} 2');
    expect(samples).toContain('t_seconds_bucket{operation="lock",le="0.001"} 1');
    expect(samples).toContain('t_seconds_bucket{operation="lock",le="0.01"} 2');
    expect(samples).toContain('t_seconds_count{operation="unlock"} 1');
    expect(samples.join("\n")).not.toContain("extra");
  });
});
