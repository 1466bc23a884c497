import { createLockService } from "@leasehold/server";
import { LeaseholdError, type LockEventsRequest, type LockService, type LockWatchUpdate } from "@leasehold/protocol";
import type { Subscription } from "rxjs";
import { afterEach, describe, expect, it } from "vitest";
import { LockClient } from "../src/index.js";
import { watchLocks } from "../src/watch-locks.js";
import { embeddedHarness, httpHarness, type Harness } from "./support/harness.js";

const harnesses: Harness[] = [];
const subscriptions: Subscription[] = [];
afterEach(async () => {
  for (const s of subscriptions.splice(0)) s.unsubscribe();
  await Promise.all(harnesses.splice(0).map((h) => h.close()));
});

/** Collects what an Observable emits; `until` waits for a condition on it. */
function collect(observable: ReturnType<LockClient["watchLocks"]>) {
  const seen: LockWatchUpdate[] = [];
  const errors: unknown[] = [];
  subscriptions.push(observable.subscribe({ next: (u) => seen.push(u), error: (e) => errors.push(e) }));
  return {
    seen,
    errors,
    async until(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
      const deadline = performance.now() + timeoutMs;
      while (!condition()) {
        if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}; saw ${JSON.stringify(seen)}`);
        await new Promise((r) => setTimeout(r, 5));
      }
    },
  };
}

/** The descriptors of every event seen, as "kind descriptor". */
function eventLines(seen: readonly LockWatchUpdate[]): string[] {
  return seen.flatMap((u) => (u.type === "events" ? u.events.flatMap((e) => e.descriptors.map((d) => `${e.kind} ${d.descriptor}`)) : []));
}

describe.each([
  ["embedded", embeddedHarness],
  ["HTTP", httpHarness],
] as const)("watchLocks (%s)", (_name, factory) => {
  it("emits a snapshot, then every lock and unlock under its prefixes in order, from another client's real calls", async () => {
    const h = await factory({});
    harnesses.push(h);
    const other = h.client();
    const before = await other.lock([{ descriptor: "jobs/1", mode: "exclusive" }]);
    const watch = collect(h.client().watchLocks(["jobs/"], { pollWaitMs: 200 }));
    await watch.until(() => watch.seen.length > 0, "the first snapshot");
    const first = watch.seen[0]!;
    expect(first.type).toBe("snapshot");
    expect(first.type === "snapshot" && first.locked).toEqual([{ descriptor: "jobs/1", mode: "exclusive" }]);

    const a = await other.lock([{ descriptor: "jobs/2", mode: "shared" }]);
    await other.lock([{ descriptor: "other/1", mode: "exclusive" }]);
    if (a.status !== "acquired" || before.status !== "acquired") throw new Error("not acquired");
    await other.unlock([a.token, before.token]);
    await watch.until(() => eventLines(watch.seen).length === 3, "three events");
    expect(eventLines(watch.seen)).toEqual(["lock jobs/2", "unlock jobs/2", "unlock jobs/1"]);
    const versions = watch.seen.flatMap((u) => (u.type === "events" ? u.events.map((e) => e.version) : []));
    expect(versions).toEqual([first.version + 1, first.version + 2, first.version + 3]);
    expect(watch.errors).toEqual([]);
  });

  it("re-registers before the server's TTL: events keep coming long after it, with no second snapshot", async () => {
    const h = await factory({ watchTtlMs: 300 });
    harnesses.push(h);
    const watch = collect(h.client().watchLocks(["k"], { reRegisterEveryMs: 80, pollWaitMs: 40 }));
    await watch.until(() => watch.seen.length > 0, "the first snapshot");
    await new Promise((r) => setTimeout(r, 1_200));
    const other = h.client();
    await other.lock([{ descriptor: "k1", mode: "exclusive" }]);
    await watch.until(() => eventLines(watch.seen).includes("lock k1"), "the lock after four TTLs");
    expect(watch.seen.filter((u) => u.type === "snapshot")).toHaveLength(1);
  });

  it("with the watch left to lapse, the server's snapshot shows it and the watcher registers again at once", async () => {
    const h = await factory({ watchTtlMs: 150 });
    harnesses.push(h);
    const watch = collect(h.client().watchLocks(["k"], { reRegisterEveryMs: 60_000, pollWaitMs: 40 }));
    await watch.until(() => watch.seen.length > 0, "the first snapshot");
    await new Promise((r) => setTimeout(r, 400));
    await watch.until(() => watch.seen.some((u) => u.type === "snapshot" && u.prefixes.length === 0), "a snapshot without the lapsed prefix");
    await watch.until(() => {
      const last = watch.seen[watch.seen.length - 1]!;
      return last.type === "snapshot" && last.prefixes.includes("k");
    }, "a snapshot after registering again");
    await h.client().lock([{ descriptor: "k2", mode: "exclusive" }]);
    // The watch keeps lapsing every 150 ms: the lock reaches the watcher as its event when the
    // watch was registered at that moment, or (a slow machine: the lock landed while it had lapsed)
    // in the next snapshot taken with the prefix registered again. Either way the watcher, having
    // registered again by itself, sees the lock.
    await watch.until(
      () => eventLines(watch.seen).includes("lock k2") || watch.seen.some((u) => u.type === "snapshot" && u.prefixes.includes("k") && u.locked.some((l) => l.descriptor === "k2")),
      "the lock of k2, as an event or in a snapshot with the prefix registered",
    );
  });
});

describe("watchLocks over a flaky or gapped service", () => {
  /** An embedded service whose lock-events can be made to fail or to skip a version. */
  function wrapped() {
    const inner = createLockService({});
    const state = { fail: 0, skipNext: false, eventCalls: 0, sinces: [] as (LockEventsRequest["since"])[] };
    const service: LockService = {
      lock: (n, b, o) => inner.lock(n, b, o),
      unlock: (n, b, o) => inner.unlock(n, b, o),
      refresh: (n, b, o) => inner.refresh(n, b, o),
      timestamps: (n, b, o) => inner.timestamps(n, b, o),
      startTransactions: (n, b, o) => inner.startTransactions(n, b, o),
      immutableTimestamp: (n, b, o) => inner.immutableTimestamp(n, b, o),
      health: (o) => inner.health(o),
      lockWatches: (n, b, o) => inner.lockWatches(n, b, o),
      async lockEvents(n, b, o) {
        state.eventCalls++;
        state.sinces.push(b.since);
        if (state.fail > 0) {
          state.fail--;
          throw new LeaseholdError("UNAVAILABLE", "injected");
        }
        const answer = await inner.lockEvents(n, b, o);
        if (state.skipNext && answer.type === "events" && answer.events.length > 1) {
          state.skipNext = false;
          return { ...answer, events: answer.events.slice(1) };
        }
        return answer;
      },
    };
    return { inner, state, service };
  }

  it("resumes from its last version after failed calls: no snapshot, no event lost or repeated", async () => {
    const { inner, state, service } = wrapped();
    const client = LockClient.embedded(inner, { namespace: "flaky" });
    try {
      const watch = collect(watchLocks(service, "flaky", [""], { pollWaitMs: 30 }));
      await watch.until(() => watch.seen.length > 0, "the first snapshot");
      const t1 = await client.lock([{ descriptor: "a", mode: "exclusive" }]);
      await watch.until(() => eventLines(watch.seen).length === 1, "one event");
      state.fail = 3;
      if (t1.status !== "acquired") throw new Error("not acquired");
      await client.unlock([t1.token]);
      await client.lock([{ descriptor: "b", mode: "exclusive" }]);
      await watch.until(() => eventLines(watch.seen).length === 3, "the events after the failures");
      expect(eventLines(watch.seen)).toEqual(["lock a", "unlock a", "lock b"]);
      expect(watch.seen.filter((u) => u.type === "snapshot")).toHaveLength(1);
      expect(state.sinces.filter((s) => s === null)).toHaveLength(1);
    } finally {
      await client.close();
      await inner.close();
    }
  });

  it("turns a skipped version into a snapshot instead of emitting the gapped events", async () => {
    const { inner, state, service } = wrapped();
    const client = LockClient.embedded(inner, { namespace: "gap" });
    try {
      // A long poll wait keeps both events in one answer, which the wrapper then cuts.
      const watch = collect(watchLocks(service, "gap", [""], { pollWaitMs: 0 }));
      await watch.until(() => watch.seen.length > 0, "the first snapshot");
      const seenBefore = state.eventCalls;
      await new Promise((r) => setTimeout(r, 20));
      state.skipNext = true;
      await client.lock([{ descriptor: "x", mode: "exclusive" }]);
      await client.lock([{ descriptor: "y", mode: "exclusive" }]);
      await watch.until(() => state.eventCalls > seenBefore + 3 && !state.skipNext, "the cut answer");
      await watch.until(() => watch.seen.filter((u) => u.type === "snapshot").length === 2, "a second snapshot");
      const second = watch.seen.filter((u) => u.type === "snapshot")[1]!;
      expect(second.type === "snapshot" && second.locked.map((l) => l.descriptor)).toEqual(["x", "y"]);
      // No events answer that started past the version after the watcher's was emitted.
      let version = watch.seen[0]!.version;
      for (const u of watch.seen.slice(1)) {
        if (u.type === "events") expect(u.events[0]!.version).toBe(version + 1);
        version = u.version;
      }
    } finally {
      await client.close();
      await inner.close();
    }
  });

  it("stops polling when unsubscribed", async () => {
    const { inner, state, service } = wrapped();
    try {
      const sub = watchLocks(service, "stop", [""], { pollWaitMs: 10 }).subscribe(() => undefined);
      await new Promise((r) => setTimeout(r, 100));
      sub.unsubscribe();
      await new Promise((r) => setTimeout(r, 30));
      const calls = state.eventCalls;
      await new Promise((r) => setTimeout(r, 200));
      expect(state.eventCalls).toBe(calls);
    } finally {
      await inner.close();
    }
  });

  it("errors when the server refuses the prefixes", async () => {
    const inner = createLockService({});
    try {
      const watch = collect(watchLocks(inner, "bad", ["x".repeat(2_000)]));
      await watch.until(() => watch.errors.length > 0, "the error");
      expect((watch.errors[0] as LeaseholdError).code).toBe("INVALID_ARGUMENT");
    } finally {
      await inner.close();
    }
  });
});
