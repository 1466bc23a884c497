import { LeaseholdError, type LockResponse } from "@leasehold/protocol";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import type { Coordinator, LoadedBound } from "../../src/cluster/coordinator.js";
import { ShardTerm } from "../../src/cluster/shard-term.js";
import { InMemoryLockService } from "../../src/service/in-memory-lock-service.js";

const refuse = (): never => {
  throw new Error("not used by this test");
};

/** The tables a standby carries: namespaces "a" and "b", each with a lock held (small fencing numbers). */
async function carriedImages(): Promise<{ images: Record<string, unknown>; tokens: number[] }> {
  const source = new InMemoryLockService({ leaderId: "leader-1" });
  const tokens: number[] = [];
  for (const ns of ["a", "b"]) {
    const got = await source.lock(ns, { locks: [{ descriptor: "held", mode: "exclusive" }] });
    tokens.push(got.status === "acquired" ? got.acquired[0]!.fencingToken : NaN);
  }
  const images = { a: source.exportNamespace("a"), b: source.exportNamespace("b") };
  await source.close();
  return { images, tokens };
}

describe("a carried table whose bounds the adoption loaded (ShardTerm loadedBounds)", () => {
  const terms: ShardTerm[] = [];
  afterEach(() => {
    for (const term of terms.splice(0)) term.end(new LeaseholdError("UNAVAILABLE", "test over"));
  });

  const termWith = (coordinator: Coordinator, carried: Record<string, unknown>, loadedBounds: LoadedBound[]): ShardTerm => {
    const term = new ShardTerm({
      term: { shard: 0, epoch: 2 },
      leaderId: "leader-1",
      serverId: "server-2",
      coordinator,
      logger: pino({ level: "silent" }),
      clock: () => performance.now(),
      wallClock: () => Date.now(),
      gateUntil: { monotonic: performance.now() + 60_000, wall: Date.now() + 60_000 },
      grantsFrom: 0,
      lockDelayMs: 0,
      leaseMs: 10_000,
      validForMs: 5_000,
      reserveBlock: 1_000,
      retryAfterMs: 1_000,
      onFailed: () => undefined,
      onBoundExtended: () => undefined,
      carried,
      loadedBounds,
    });
    terms.push(term);
    return term;
  };
  const fresh = (term: ShardTerm, ns: string, descriptor: string) => term.beginLock(ns, { locks: [{ descriptor, mode: "exclusive" }] }) as LockResponse;

  it("serves at once, without a statement, above the bounds the adoption read: fencing tokens and timestamps never go back", async () => {
    const { images, tokens } = await carriedImages();
    // Control: the carried counters alone are far below the stored bounds, so a number above a
    // bound can only come from the counter resuming above what the adoption read.
    expect(Math.max(...tokens)).toBeLessThan(100);
    const statements = { readBound: refuse, extendBound: refuse, loadBounds: refuse } as unknown as Coordinator;
    const term = termWith(statements, images, [
      { namespace: "a", floor: 5_000, immutable: null, to: 6_000 },
      { namespace: "b", floor: 7_000, immutable: 4_000, to: 8_000 },
    ]);
    expect(term.isOpen(performance.now())).toBe(true);
    const granted = fresh(term, "a", "fresh");
    expect(granted.status).toBe("acquired");
    expect(granted.status === "acquired" && granted.acquired[0]!.fencingToken).toBeGreaterThan(5_000);
    const ts = await term.service.timestamps("b", { count: 3 });
    expect(ts.start).toBeGreaterThan(7_000);
    expect(ts.start + ts.count - 1).toBeLessThanOrEqual(8_000);
    // The carried lock is still held: the same descriptor is not granted again.
    expect(fresh(term, "a", "held").status).not.toBe("acquired");
  });

  it("a carried namespace the adoption did not load is loaded (in one statement) before the term serves; the loaded one is not read again", async () => {
    const { images } = await carriedImages();
    const asked: string[][] = [];
    let answer!: (rows: LoadedBound[]) => void;
    const statements = {
      readBound: refuse,
      extendBound: refuse,
      loadBounds: (_term: unknown, namespaces: readonly string[]) => {
        asked.push([...namespaces]);
        return new Promise<LoadedBound[]>((resolve) => (answer = resolve));
      },
    } as unknown as Coordinator;
    const term = termWith(statements, images, [{ namespace: "a", floor: 5_000, immutable: null, to: 6_000 }]);
    expect(asked).toEqual([["b"]]);
    // Nothing is served while "b" loads, not even "a": the answer says to retry soon.
    const refused = (() => {
      try {
        fresh(term, "a", "early");
        return null;
      } catch (err) {
        return err as LeaseholdError;
      }
    })();
    expect(refused?.status).toBe(503);
    expect((refused?.details as { retryAfterMs?: number } | undefined)?.retryAfterMs).toBe(50);
    answer([{ namespace: "b", floor: 7_000, immutable: null, to: 8_000 }]);
    await new Promise((r) => setImmediate(r));
    expect(term.isOpen(performance.now())).toBe(true);
    const granted = fresh(term, "b", "fresh");
    expect(granted.status === "acquired" && granted.acquired[0]!.fencingToken).toBeGreaterThan(7_000);
  });
});
