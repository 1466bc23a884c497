import fc from "fast-check";
import type { LockResponse, LockSpec } from "@leasehold/protocol";
import { describe, expect, it } from "vitest";
import type { DescriptorState } from "../../src/engine/descriptor-state.js";
import type { LockAttempt } from "../../src/engine/lock-engine.js";
import type { LockRequestState } from "../../src/engine/lock-request-state.js";
import type { PendingLock } from "../../src/engine/pending-lock.js";
import { makeEngine } from "./engine-fixture.js";

const descriptor = fc.constantFrom("a", "b", "c", "d");
const spec = fc.oneof(
  descriptor.map((d): LockSpec => ({ descriptor: d, mode: "exclusive" })),
  descriptor.map((d): LockSpec => ({ descriptor: d, mode: "shared" })),
  fc.tuple(descriptor, fc.integer({ min: 1, max: 3 })).map(([d, limit]): LockSpec => ({ descriptor: d, mode: "permit", limit })),
);
const op = fc.oneof(
  fc.record({
    kind: fc.constant("lock" as const),
    locks: fc.uniqueArray(spec, { minLength: 1, maxLength: 3, selector: (s) => s.descriptor }),
    timeout: fc.constantFrom(0, 5, 20, 500),
    amap: fc.boolean(),
    requestId: fc.option(fc.constantFrom("r1", "r2"), { nil: undefined }),
  }),
  fc.record({ kind: fc.constant("unlock" as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant("abandon" as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant("tick" as const), ms: fc.constantFrom(1, 5, 300) }),
  fc.record({ kind: fc.constant("txn" as const) }),
);

describe("engine invariants under random operations", () => {
  it("never lets conflicting holders coexist, never leaves a grantable queue head waiting, and cleans up", () => {
    fc.assert(
      // Long enough runs that queues build up (short ones rarely queue anything on a descriptor).
      fc.property(fc.array(op, { minLength: 10, maxLength: 80, size: "max" }), (ops) => {
        const t = makeEngine();
        const tokens: string[] = [];
        const pending: LockAttempt[] = [];
        const fencing = new Set<number>();
        const abandoned = new Set<LockAttempt>();
        // FIFO per descriptor: every request ever seen queued on a descriptor, in queue order, with
        // the highest fencing token handed out when it was first seen there; and the grants of
        // this step (fencing tokens follow grant order: every grant takes the namespace's next one).
        const seenQueued = new Map<string, { req: LockRequestState; since: number }[]>();
        let grants: { descriptor: string; fence: number; req: LockRequestState | null }[] = [];
        const recorded = new Set<LockAttempt>();
        const record = (answer: LockResponse | undefined, req: LockRequestState | null = null) => {
          if (answer?.status !== "acquired") return;
          tokens.push(answer.token);
          const names = answer.acquired.map((a) => a.descriptor);
          expect(names).toEqual([...names].sort());
          for (const a of answer.acquired) {
            fencing.add(a.fencingToken);
            grants.push({ descriptor: a.descriptor, fence: a.fencingToken, req });
          }
        };
        const descriptorsOf = () =>
          (t.engine as unknown as { namespaces: Map<string, { descriptors: Map<string, DescriptorState> }> }).namespaces.get("ns")?.descriptors.values() ?? [];
        const fenceOf = (req: LockRequestState, descriptor: string) => req.acquired().find((a) => a.descriptor === descriptor)?.fencingToken;
        const checkFifo = () => {
          // No grant of a descriptor goes to anyone but the requests queued there ahead of a request
          // that was queued when the grant happened and was not granted before it.
          for (const g of grants) {
            for (const q of seenQueued.get(g.descriptor) ?? []) {
              if (q.req === g.req) break; // the rest queued behind the grantee
              if (q.since >= g.fence) continue; // queued after this grant
              const stillQueued = q.req.pending?.queuedOn?.key === g.descriptor;
              const grantedLater = (fenceOf(q.req, g.descriptor) ?? -1) > g.fence;
              expect(stillQueued || grantedLater, `a request overtook an earlier one queued on ${g.descriptor}`).toBe(false);
            }
          }
          grants = [];
          const highest = t.engine.snapshot("ns").nextTimestamp - 1;
          for (const d of descriptorsOf()) {
            let list = seenQueued.get(d.key);
            for (let q = d.queueHead; q !== null; q = q.queueNext) {
              if (list === undefined) seenQueued.set(d.key, (list = []));
              if (!list.some((e) => e.req === q.request)) list.push({ req: q.request, since: highest });
            }
          }
        };
        for (const o of ops) {
          if (o.kind === "lock") {
            try {
              const attempt = t.engine.lock("ns", {
                locks: o.locks,
                acquireTimeoutMs: o.timeout,
                ...(o.amap ? { behavior: "as-many-as-possible" as const } : {}),
                ...(o.requestId === undefined ? {} : { requestId: o.requestId }),
              });
              if (attempt.status === "waiting") pending.push(attempt);
              else {
                if (attempt.status === "acquired" && !o.amap) expect(attempt.acquired).toHaveLength(o.locks.length);
                record(attempt);
              }
            } catch (err) {
              expect((err as { code?: string }).code).toBe("REQUEST_ID_CONFLICT");
            }
          } else if (o.kind === "unlock" && tokens.length > 0) {
            t.engine.unlock("ns", { tokens: [tokens[o.pick % tokens.length]!] });
          } else if (o.kind === "abandon" && pending.length > 0) {
            const p = pending[o.pick % pending.length]!;
            if (p.status === "waiting" && t.outcome(p) === undefined && t.engine.abandon(p)) abandoned.add(p);
          } else if (o.kind === "tick") t.tick(o.ms);
          else if (o.kind === "txn") t.engine.startTransactions("ns", { count: 1 });
          for (const p of pending) {
            const outcome = t.outcome(p);
            if (outcome === undefined || recorded.has(p)) continue;
            recorded.add(p);
            if (!(outcome instanceof Error)) record(outcome as LockResponse, (p as PendingLock).request);
          }
          checkFifo();
          const snap = t.engine.snapshot("ns");
          for (const d of snap.descriptors) {
            const modes = new Set(d.holders.map((h) => h.mode));
            expect(modes.size).toBeLessThanOrEqual(1);
            if (modes.has("exclusive")) expect(d.holders).toHaveLength(1);
            const head = d.queue[0];
            if (head !== undefined) {
              expect(d.holders.length).toBeGreaterThan(0);
              const blocked =
                head.mode !== d.holders[0]!.mode || head.mode === "exclusive" || (head.mode === "permit" && d.holders.length >= (d.limit ?? 1));
              expect(blocked).toBe(true);
            }
            for (const h of d.holders) expect(h.fencingToken).toBeLessThan(snap.nextTimestamp);
          }
        }
        // Everything ends: leases lapse, waits time out, and nothing is left behind.
        t.tick(2_000);
        t.tick(2_000);
        const end = t.engine.snapshot("ns");
        expect(end.descriptors).toEqual([]);
        expect(end.waitingRequests).toBe(0);
        expect(end.heldTokens).toBe(0);
        expect(t.engine.metrics().heldLocks).toBe(0);
        for (const p of pending) expect(t.outcome(p) !== undefined || abandoned.has(p)).toBe(true);
        // Private check: no idle descriptor lingers outside the bounded window of recently idle
        // ones (watch lists, limits): every descriptor left is idle and queued for eviction.
        const ns = (t.engine as unknown as { namespaces: Map<string, { descriptors: Map<string, { retired: boolean; isIdle(): boolean }> }> }).namespaces.get("ns");
        for (const d of ns?.descriptors.values() ?? []) {
          expect(d.isIdle()).toBe(true);
          expect(d.retired).toBe(true);
        }
      }),
      { numRuns: 400 },
    );
  });
});

describe("idle descriptors", () => {
  it("are kept only within a bounded window, then evicted oldest first", async () => {
    const { IDLE_DESCRIPTORS } = await import("../../src/engine/namespace-state.js");
    const { LockEngine } = await import("../../src/engine/lock-engine.js");
    const engine = new LockEngine({ clock: () => 0 });
    const total = IDLE_DESCRIPTORS + 500;
    for (let i = 0; i < total; i++) {
      const res = engine.lock("ns", { locks: [{ descriptor: `d${i}`, mode: "exclusive" }] });
      if (res.status !== "acquired") throw new Error("not granted");
      engine.unlock("ns", { tokens: [res.token] });
    }
    const ns = (engine as unknown as { namespaces: Map<string, { descriptors: Map<string, unknown> }> }).namespaces.get("ns");
    expect(ns?.descriptors.size).toBe(IDLE_DESCRIPTORS);
    expect(ns?.descriptors.has("d0")).toBe(false);
    expect(ns?.descriptors.has(`d${total - 1}`)).toBe(true);
    expect(engine.snapshot("ns").descriptors).toEqual([]);
  });

  it("a kept descriptor that is locked again is not evicted while held", async () => {
    const { IDLE_DESCRIPTORS } = await import("../../src/engine/namespace-state.js");
    const { LockEngine } = await import("../../src/engine/lock-engine.js");
    const engine = new LockEngine({ clock: () => 0 });
    const first = engine.lock("ns", { locks: [{ descriptor: "hot", mode: "exclusive" }] });
    if (first.status !== "acquired") throw new Error("not granted");
    engine.unlock("ns", { tokens: [first.token] });
    const again = engine.lock("ns", { locks: [{ descriptor: "hot", mode: "exclusive" }] });
    expect(again.status).toBe("acquired");
    for (let i = 0; i < IDLE_DESCRIPTORS + 10; i++) {
      const res = engine.lock("ns", { locks: [{ descriptor: `d${i}`, mode: "exclusive" }] });
      if (res.status === "acquired") engine.unlock("ns", { tokens: [res.token] });
    }
    // Still held: a second exclusive request must time out, not be granted on a forgotten state.
    expect(engine.lock("ns", { locks: [{ descriptor: "hot", mode: "exclusive" }] }).status).toBe("timeout");
    expect(engine.snapshot("ns").descriptors.map((d) => d.descriptor)).toEqual(["hot"]);
  });
});
