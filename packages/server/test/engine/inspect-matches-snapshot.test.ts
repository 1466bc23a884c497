import type { DescriptorsPage, LockMode, LockSpec } from "@leasehold/protocol";
import { describe, expect, it } from "vitest";
import type { LockEngine } from "../../src/engine/lock-engine.js";
import { makeEngine } from "./engine-fixture.js";

/** A small deterministic PRNG (mulberry32), so a failure can be replayed from its seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Every descriptor of a namespace through the inspection pages, `limit` at a time. */
function allPages(engine: LockEngine, limit: number): DescriptorsPage["descriptors"] {
  const out: DescriptorsPage["descriptors"][number][] = [];
  let cursor: string | undefined;
  do {
    const page = engine.inspect("ns", { view: "descriptors", contended: false, limit, cursor }) as DescriptorsPage;
    out.push(...page.descriptors);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return out;
}

describe("inspection agrees with the engine's snapshot", () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    it(`after a random mix of locks, waits, claims, unlocks, lapses and revokes (seed ${seed})`, () => {
      const random = prng(seed);
      const { engine, tick } = makeEngine({ leaseMs: 500 });
      const live: string[] = [];
      const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
      const modes: LockMode[] = ["exclusive", "shared", "permit"];
      for (let step = 0; step < 400; step++) {
        const r = random();
        if (r < 0.55) {
          const count = 1 + Math.floor(random() * 3);
          const names = new Set<string>();
          while (names.size < count) names.add(`d${Math.floor(random() * 12)}`);
          const mode = pick(modes);
          const locks: LockSpec[] = [...names].map((descriptor) => (mode === "permit" ? { descriptor, mode, limit: 2 } : { descriptor, mode }));
          const claim = random() < 0.25;
          const res = engine.lock("ns", { locks, acquireTimeoutMs: random() < 0.6 ? 300 : 0, clientDescription: `c${step}`, ...(claim ? { behavior: "as-many-as-possible" as const } : {}) });
          if (res.status === "acquired") live.push(res.token);
        } else if (r < 0.75 && live.length > 0) {
          engine.unlock("ns", { tokens: [live.splice(Math.floor(random() * live.length), 1)[0]!] });
        } else if (r < 0.8) {
          engine.revoke("ns", { descriptors: [`d${Math.floor(random() * 12)}`] });
        } else {
          tick(Math.floor(random() * 200));
        }
        if (step % 40 !== 39) continue;
        const snap = engine.snapshot("ns");
        const pages = allPages(engine, 1 + Math.floor(random() * 5));
        expect(pages.map((d) => d.descriptor)).toEqual(snap.descriptors.map((d) => d.descriptor));
        for (const [i, d] of pages.entries()) {
          const s = snap.descriptors[i]!;
          expect(d.holders.map((h) => [h.mode, h.fencingToken])).toEqual(s.holders.map((h) => [h.mode, h.fencingToken]));
          expect(d.holderCount).toBe(s.holders.length);
          expect(d.waiters.map((w) => w.mode)).toEqual(s.queue.map((q) => q.mode));
          expect(d.limit).toBe(s.limit);
        }
        const summary = engine.inspectNamespaces(undefined, 10).namespaces[0]!;
        expect(summary.heldLocks).toBe(snap.descriptors.reduce((n, d) => n + d.holders.length, 0));
        expect(summary.heldTokens).toBe(snap.heldTokens);
        expect(summary.waitingRequests).toBe(snap.waitingRequests);
      }
    });
  }
});
