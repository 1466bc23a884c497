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

  const termWith = (coordinator: Coordinator, carried: Record<string, unknown>, loadedBounds: LoadedBound[], clock = () => performance.now()): ShardTerm => {
    const term = new ShardTerm({
      term: { shard: 0, epoch: 2 },
      leaderId: "leader-1",
      serverId: "server-2",
      coordinator,
      logger: pino({ level: "silent" }),
      clock,
      wallClock: () => Date.now(),
      gateUntil: { monotonic: clock() + 60_000, wall: Date.now() + 60_000 },
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

  it("the claim window of a carried waiter counts from when the gate opens, not from the promotion: bounds loading slower than the window do not cost a re-sent waiter its place", async () => {
    // The old leader's table: h holds d, w waits for it (requestId w-1), carried to this term.
    const source = new InMemoryLockService({ leaderId: "leader-1" });
    const h = (await source.lock("b", { locks: [{ descriptor: "d", mode: "exclusive" }] })) as Extract<LockResponse, { status: "acquired" }>;
    const wRequest = { requestId: "w-1", locks: [{ descriptor: "d", mode: "exclusive" as const }], acquireTimeoutMs: 60_000 };
    void source.lock("b", wRequest).catch(() => undefined);
    // And h2 holds e, w2 waits for it: w2's client never re-sends.
    const h2 = (await source.lock("b", { locks: [{ descriptor: "e", mode: "exclusive" }] })) as Extract<LockResponse, { status: "acquired" }>;
    void source.lock("b", { requestId: "w-2", locks: [{ descriptor: "e", mode: "exclusive" }], acquireTimeoutMs: 60_000 }).catch(() => undefined);
    const images = { b: source.exportNamespace("b") };
    await source.close();

    let now = 1_000;
    let answer!: (rows: LoadedBound[]) => void;
    const statements = {
      readBound: refuse,
      extendBound: refuse,
      loadBounds: () => new Promise<LoadedBound[]>((resolve) => (answer = resolve)),
    } as unknown as Coordinator;
    const term = termWith(statements, images, [], () => now);
    expect(term.carried).toMatchObject({ waiters: 2 });
    // A slow database: the bound loads 3 s after the promotion, past the 2 s window.
    now += 3_000;
    answer([{ namespace: "b", floor: 7_000, immutable: null, to: 8_000 }]);
    await new Promise((r) => setImmediate(r));
    expect(term.isOpen(now)).toBe(true);
    // Another client asks for d first, then w's client re-sends (its 503s while loading are over).
    const other = term.beginLock("b", { locks: [{ descriptor: "d", mode: "exclusive" }], acquireTimeoutMs: 60_000 });
    const resent = term.beginLock("b", wRequest);
    expect("answer" in resent && "answer" in other).toBe(true);
    expect(term.service.metrics().abandonedTotal).toBe(0);
    // w kept its place: h's unlock grants d to w, ahead of the newcomer.
    await term.service.unlock("b", { tokens: [h.token] });
    const granted = await Promise.race([(resent as { answer: Promise<LockResponse> }).answer.then(() => "w"), (other as { answer: Promise<LockResponse> }).answer.then(() => "other")]);
    expect(granted).toBe("w");
    // The window still ends, 2 s after the gate opened: w2, never re-sent, is dropped then and not before.
    now += 1_999;
    await term.service.refresh("b", { tokens: [h2.token] });
    expect(term.service.metrics().abandonedTotal).toBe(0);
    now += 1;
    await term.service.refresh("b", { tokens: [h2.token] });
    expect(term.service.metrics().abandonedTotal).toBe(1);
  });
});
