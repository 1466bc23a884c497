import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { NamespaceImage, ReplicationEntry } from "../../src/engine/replication-entries.js";
import { operation } from "./replication-fixture.js";
import { runScenario, type Tampering } from "./replication-scenario.js";

const scenario = fc.record({
  before: fc.array(operation, { minLength: 5, maxLength: 70, size: "max" }),
  after: fc.array(operation, { minLength: 0, maxLength: 30 }),
  joinAt: fc.nat({ max: 80 }),
  claimMask: fc.nat(),
});

/** The property must fail, and by a mismatch the comparison found (not by a refused image or entry). */
function expectCaught(tamper: Tampering, numRuns: number): void {
  const run = fc.check(property(tamper), { numRuns });
  expect(run.failed).toBe(true);
  expect(String(run.errorInstance)).toMatch(/AssertionError: (before promotion|promoted|claimed|after promotion|claim window over|settlements)/);
}

const property = (tamper?: Tampering) =>
  fc.property(scenario, ({ before, after, joinAt, claimMask }) => {
    runScenario(before, after, joinAt, (serial) => ((claimMask >> (serial % 16)) & 1) === 0, tamper);
  });

describe("replication: a replica shows and, promoted, answers exactly what its leader does", () => {
  it("fed from the start, joined mid-way by an image plus the feed, or restored from an image at the end", () => {
    fc.assert(property(), { numRuns: 150 });
  });
});

describe("replication negative controls: breaking one thing makes the property fail", () => {
  it("an image that drops the fencing tokens (every hold's set to 1)", () => {
    const dropFencing = (image: NamespaceImage): NamespaceImage => ({
      ...image,
      tokens: image.tokens.map((t) => (t.kind === "lock" ? { ...t, holds: t.holds.map((h) => ({ ...h, fencingToken: 1 })) } : t)),
    });
    expectCaught({ image: dropFencing }, 150);
  });

  it("an image whose queues are listed back to front", () => {
    const reverse = (image: NamespaceImage): NamespaceImage => ({ ...image, queues: image.queues.map((q) => ({ ...q, serials: [...q.serials].reverse() })) });
    expectCaught({ image: reverse }, 300);
  });

  it("a feed that loses the permit-limit changes", () => {
    const dropLimits = (entry: ReplicationEntry): ReplicationEntry | null => (entry.type === "limit" ? null : entry);
    expectCaught({ entry: dropLimits }, 300);
  });
});
