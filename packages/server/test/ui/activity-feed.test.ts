import { describe, expect, it } from "vitest";
import { ActivityFeed } from "../../src/service/activity-feed.js";

// Time is the subject here (seconds are closed by the wall clock), so the clock is injected.
function feed() {
  let now = 1_000_000;
  let grants = 0;
  const f = new ActivityFeed({ grantsTotal: () => grants, now: () => now });
  return {
    f,
    advance: (ms: number) => (now += ms),
    grant: (n: number) => (grants += n),
  };
}

const lapse = (fp: string) => ({ fingerprint: fp, clientDescription: undefined, firstDescriptor: "d", startTimestamp: undefined, heldForMs: 5 });

describe("ActivityFeed", () => {
  it("closes each second with the grants made in it, idle seconds as zero, at most 120 kept", () => {
    const { f, advance, grant } = feed();
    // Each page() closes the seconds that ended, as the feed's own timer does 4 times a second.
    f.page(0, undefined, true);
    grant(5);
    advance(1_000);
    f.page(0, undefined, true);
    grant(3);
    advance(3_000);
    const seconds = f.page(0, undefined, true).seconds!;
    expect(seconds.map((s) => [s.at, s.grants])).toEqual([
      [1_000, 5],
      [1_001, 3],
      [1_002, 0],
      [1_003, 0],
    ]);
    advance(500_000);
    const later = f.page(0, undefined, true).seconds!;
    expect(later).toHaveLength(120);
    expect(later[later.length - 1]!.at).toBe(1_503);
    f.close();
  });

  it("reports p50, p99 and max of the waits in a second, and their count beyond the kept sample", () => {
    const { f, advance } = feed();
    for (let i = 1; i <= 3_000; i++) f.waited(i % 100);
    f.waited(5_000);
    advance(1_000);
    const [second] = f.page(0, undefined, true).seconds!;
    expect(second!.waits!.count).toBe(3_001);
    expect(second!.waits!.p50Ms).toBeGreaterThanOrEqual(30);
    expect(second!.waits!.p50Ms).toBeLessThanOrEqual(70);
    expect(second!.waits!.p99Ms).toBeLessThanOrEqual(99);
    f.close();
  });

  it("numbers events, answers only those after a sequence number and in visible namespaces, and keeps the last 1,000", () => {
    const { f } = feed();
    f.lapse("a", 1, lapse("aaaaaaaaaaaaaaaa"));
    f.lapse("b", 2, lapse("bbbbbbbbbbbbbbbb"));
    f.revoked("a", "why", { revoked: [], notFound: ["x"] }); // released nothing: not an event
    f.revoked("a", "why", { revoked: [{ fingerprint: "cccccccccccccccc", descriptors: ["z", "y"], heldForMs: 9 }], notFound: [] });
    const all = f.page(0, undefined, false);
    expect(all.events.map((e) => [e.seq, e.kind, e.namespace])).toEqual([
      [1, "lapse", "a"],
      [2, "lapse", "b"],
      [3, "revoke", "a"],
    ]);
    expect(all.seconds).toBeUndefined();
    expect(f.page(1, (ns) => ns === "a", false).events.map((e) => e.seq)).toEqual([3]);
    for (let i = 0; i < 1_500; i++) f.lapse("a", 1, lapse("dddddddddddddddd"));
    const page = f.page(0, undefined, false);
    expect(page.events).toHaveLength(1_000);
    expect(page.events[0]!.seq).toBe(504);
    expect(page.nextSeq).toBe(1_503);
    f.close();
  });
});
