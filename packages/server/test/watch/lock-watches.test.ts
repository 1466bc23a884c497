import { LeaseholdError, isErrorCode, operationPath, type LockWatchUpdate, type WatchOperation } from "@leasehold/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { LOCK_EVENTS_KEPT } from "../../src/engine/lock-watch-log.js";
import type { EmbeddedLockService } from "../../src/service/embedded-lock-service.js";
import { InMemoryLockService } from "../../src/service/in-memory-lock-service.js";
import { startServer } from "../../src/start-server.js";

/** The watch operations and the few others the tests need, over one transport. */
interface Target {
  readonly table: EmbeddedLockService;
  call(op: WatchOperation | "lock" | "unlock" | "transactions/start", namespace: string, body: unknown): Promise<any>;
  close(): Promise<void>;
}

async function embedded(options: { watchTtlMs?: number; clock?: () => number; leaseMs?: number } = {}): Promise<Target> {
  const service = new InMemoryLockService(options);
  return {
    table: service,
    call(op, ns, body) {
      switch (op) {
        case "lock-watches":
          return service.lockWatches(ns, body);
        case "lock-events":
          return service.lockEvents(ns, body);
        case "lock":
          return service.lock(ns, body);
        case "unlock":
          return service.unlock(ns, body);
        case "transactions/start":
          return service.startTransactions(ns, body);
      }
    },
    close: () => service.close(),
  };
}

async function overHttp(options: { watchTtlMs?: number } = {}): Promise<Target> {
  const server = await startServer(options);
  return {
    table: server.service,
    async call(op, ns, body) {
      const res = await fetch(server.url + operationPath(ns, op), { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      const parsed = (await res.json()) as { error?: { code: string; message: string; details: Record<string, unknown> } };
      if (res.ok) return parsed;
      const code = isErrorCode(parsed.error?.code) ? parsed.error.code : "INTERNAL";
      throw new LeaseholdError(code, parsed.error?.message ?? "", { ...parsed.error?.details, httpStatus: res.status });
    },
    close: () => server.close(),
  };
}

const open: Target[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((t) => t.close()));
});

const ORDER = (id: string) => `orders\u0000${id}`;

async function locked(t: Target, ns: string, descriptor: string, mode = "exclusive"): Promise<string> {
  const res = await t.call("lock", ns, { locks: [{ descriptor, mode }] });
  expect(res.status).toBe("acquired");
  return res.token as string;
}

async function failure(promise: Promise<unknown>): Promise<LeaseholdError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof LeaseholdError) return err;
    throw err;
  }
  throw new Error("expected a failure");
}

function events(update: LockWatchUpdate) {
  if (update.type !== "events") throw new Error(`expected events, got ${JSON.stringify(update)}`);
  return update;
}

function snapshot(update: LockWatchUpdate) {
  if (update.type !== "snapshot") throw new Error(`expected a snapshot, got ${JSON.stringify(update)}`);
  return update;
}

describe.each([
  ["embedded", embedded],
  ["HTTP", overHttp],
] as const)("lock watches (%s)", (_name, make) => {
  it("answers a snapshot of the watched locks held, then exactly the lock and unlock events on watched descriptors", async () => {
    const t = await make();
    open.push(t);
    const heldBefore = await locked(t, "w", ORDER("1"));
    await locked(t, "w", "invoices\u00001");
    expect(await t.call("lock-watches", "w", { prefixes: ["orders\u0000", "orders\u0000"] })).toEqual({ prefixes: ["orders\u0000"] });

    const first = snapshot(await t.call("lock-events", "w", { since: null }));
    expect(first.locked).toEqual([{ descriptor: ORDER("1"), mode: "exclusive" }]);
    expect(first.prefixes).toEqual(["orders\u0000"]);
    const since = { logId: first.logId, version: first.version };

    const shared = await t.call("lock", "w", { locks: [{ descriptor: ORDER("2"), mode: "shared" }, { descriptor: "invoices\u00002", mode: "exclusive" }] });
    const unwatched = await locked(t, "w", "invoices\u00003");
    await t.call("unlock", "w", { tokens: [shared.token, unwatched, heldBefore] });

    const next = events(await t.call("lock-events", "w", { since }));
    expect(next.logId).toBe(first.logId);
    expect(next.events).toEqual([
      { version: first.version + 1, kind: "lock", descriptors: [{ descriptor: ORDER("2"), mode: "shared" }] },
      { version: first.version + 2, kind: "unlock", descriptors: [{ descriptor: ORDER("2"), mode: "shared" }] },
      { version: first.version + 3, kind: "unlock", descriptors: [{ descriptor: ORDER("1"), mode: "exclusive" }] },
    ]);
    expect(next.version).toBe(first.version + 3);
    // Nothing new: an events answer with none, at the same version.
    expect(await t.call("lock-events", "w", { since: { logId: next.logId, version: next.version } })).toEqual({ type: "events", logId: next.logId, version: next.version, events: [] });
    // Another log's position is answered with a snapshot.
    expect(snapshot(await t.call("lock-events", "w", { since: { logId: "another-log", version: next.version } })).locked).toEqual([]);
    // "" watches everything.
    await t.call("lock-watches", "w", { prefixes: [""] });
    const all = snapshot(await t.call("lock-events", "w", { since: { logId: next.logId, version: next.version } }));
    expect(all.prefixes).toEqual(["", "orders\u0000"]);
    expect(all.locked.map((l) => l.descriptor)).toEqual(["invoices\u00001"]);
  });

  it("a new prefix starts the log afresh: a follower from before gets a snapshot naming it; re-registering changes nothing", async () => {
    const t = await make();
    open.push(t);
    await t.call("lock-watches", "p", { prefixes: ["a"] });
    const s = snapshot(await t.call("lock-events", "p", { since: null }));
    await t.call("lock-watches", "p", { prefixes: ["a"] });
    expect(events(await t.call("lock-events", "p", { since: { logId: s.logId, version: s.version } })).events).toEqual([]);
    await locked(t, "p", "b1");
    await t.call("lock-watches", "p", { prefixes: ["b"] });
    const after = snapshot(await t.call("lock-events", "p", { since: { logId: s.logId, version: s.version } }));
    expect(after.prefixes).toEqual(["a", "b"]);
    expect(after.locked).toEqual([{ descriptor: "b1", mode: "exclusive" }]);
    expect(after.version).toBeGreaterThan(s.version);
  });

  it("transactions/start carries the update as of its start timestamps", async () => {
    const t = await make();
    open.push(t);
    await t.call("lock-watches", "tx", { prefixes: ["k"] });
    const started = await t.call("transactions/start", "tx", { count: 2, lockWatch: { since: null } });
    expect(started.transactions).toHaveLength(2);
    const s = snapshot(started.lockWatch);
    const token = await locked(t, "tx", "k1");
    const second = await t.call("transactions/start", "tx", { count: 1, lockWatch: { since: { logId: s.logId, version: s.version } } });
    expect(events(second.lockWatch).events).toEqual([{ version: s.version + 1, kind: "lock", descriptors: [{ descriptor: "k1", mode: "exclusive" }] }]);
    await t.call("unlock", "tx", { tokens: [token] });
    // Without lockWatch the answer has none.
    expect((await t.call("transactions/start", "tx", { count: 1 })).lockWatch).toBeUndefined();
  });

  it("a long poll waits for the next event and answers it; without one it answers no events when waitMs passes", async () => {
    const t = await make();
    open.push(t);
    await t.call("lock-watches", "lp", { prefixes: [""] });
    const s = snapshot(await t.call("lock-events", "lp", { since: null }));
    const since = { logId: s.logId, version: s.version };
    let settled = false;
    const polled = t.call("lock-events", "lp", { since, waitMs: 10_000 }).finally(() => (settled = true));
    await new Promise((r) => setTimeout(r, 100));
    expect(settled).toBe(false);
    const started = performance.now();
    await locked(t, "lp", "x");
    const answer = events(await polled);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(answer.events.map((e) => e.descriptors[0]?.descriptor)).toEqual(["x"]);

    const quiet = performance.now();
    const empty = events(await t.call("lock-events", "lp", { since: { logId: answer.logId, version: answer.version }, waitMs: 200 }));
    expect(empty.events).toEqual([]);
    expect(performance.now() - quiet).toBeGreaterThanOrEqual(190);
  });

  it("refuses bad bodies with a 400 naming the field, changing nothing", async () => {
    const t = await make();
    open.push(t);
    const cases: [WatchOperation | "transactions/start", unknown, string][] = [
      ["lock-watches", {}, "prefixes"],
      ["lock-watches", { prefixes: [] }, "prefixes"],
      ["lock-watches", { prefixes: Array.from({ length: 101 }, (_, i) => `p${i}`) }, "prefixes"],
      ["lock-watches", { prefixes: ["ok", "x".repeat(1025)] }, "prefixes[1]"],
      ["lock-watches", { prefixes: ["é".repeat(513)] }, "prefixes[0]"],
      ["lock-watches", { prefixes: ["\ud800"] }, "prefixes[0]"],
      ["lock-watches", { prefixes: [null] }, "prefixes[0]"],
      ["lock-watches", { prefixes: ["a"], ttl: 5 }, "ttl"],
      ["lock-events", {}, "since"],
      ["lock-events", { since: null, waitMs: 30_001 }, "waitMs"],
      ["lock-events", { since: null, waitMs: -1 }, "waitMs"],
      ["lock-events", { since: { logId: "x", version: -1 } }, "since"],
      ["lock-events", { since: { logId: "", version: 1 } }, "since"],
      ["lock-events", { since: { logId: "x" } }, "since"],
      ["transactions/start", { count: 1, lockWatch: {} }, "lockWatch"],
      ["transactions/start", { count: 1, lockWatch: { since: 7 } }, "lockWatch"],
    ];
    for (const [op, body, path] of cases) {
      const err = await failure(t.call(op, "bad", body));
      expect(err.code, `${op} ${JSON.stringify(body)}`).toBe("INVALID_ARGUMENT");
      expect(String(err.details.path), `${op} ${JSON.stringify(body)}`).toContain(path);
      expect(err.message).toContain(path);
      if ("httpStatus" in err.details) expect(err.details.httpStatus).toBe(400);
    }
    // None of them registered anything.
    expect(snapshot(await t.call("lock-events", "bad", { since: null })).prefixes).toEqual([]);
  });

  it("refuses the 1,001st prefix of a namespace and keeps the 1,000 it has", async () => {
    const t = await make();
    open.push(t);
    for (let i = 0; i < 10; i++) {
      await t.call("lock-watches", "cap", { prefixes: Array.from({ length: 100 }, (_, j) => `p${i * 100 + j}:`) });
    }
    await t.call("lock-watches", "cap", { prefixes: ["p5:"] }); // already watched: fine
    const err = await failure(t.call("lock-watches", "cap", { prefixes: ["p7:", "new"] }));
    expect(err.code).toBe("INVALID_ARGUMENT");
    expect(err.details.path).toBe("prefixes");
    expect(err.message).toMatch(/at most 1000/);
    const s = snapshot(await t.call("lock-events", "cap", { since: null }));
    expect(s.prefixes).toHaveLength(1_000);
    expect(s.prefixes).not.toContain("new");
  });
});

describe("lock watches (embedded, injected clock)", () => {
  it("a watch expires unless re-registered; its expiry starts the log afresh and stops events", async () => {
    let now = 1_000;
    const t = await embedded({ watchTtlMs: 1_000, clock: () => now, leaseMs: 60_000 });
    open.push(t);
    await t.call("lock-watches", "ttl", { prefixes: ["a", "b"] });
    const s = snapshot(await t.call("lock-events", "ttl", { since: null }));
    now += 600;
    await t.call("lock-watches", "ttl", { prefixes: ["a"] }); // "a" now lasts until 2,600, "b" until 2,000
    await locked(t, "ttl", "a1");
    const mid = events(await t.call("lock-events", "ttl", { since: { logId: s.logId, version: s.version } }));
    expect(mid.events).toHaveLength(1);
    now += 500; // 2,100: "b" has expired
    const afterB = snapshot(await t.call("lock-events", "ttl", { since: { logId: mid.logId, version: mid.version } }));
    expect(afterB.prefixes).toEqual(["a"]);
    expect(afterB.locked).toEqual([{ descriptor: "a1", mode: "exclusive" }]);
    await locked(t, "ttl", "b1"); // no longer watched
    expect(events(await t.call("lock-events", "ttl", { since: { logId: afterB.logId, version: afterB.version } })).events).toEqual([]);
    now += 600; // 2,700: "a" has expired too
    const none = snapshot(await t.call("lock-events", "ttl", { since: { logId: afterB.logId, version: afterB.version } }));
    expect(none.prefixes).toEqual([]);
    expect(none.locked).toEqual([]);
    await locked(t, "ttl", "a2");
    expect(events(await t.call("lock-events", "ttl", { since: { logId: none.logId, version: none.version } })).events).toEqual([]);
  });

  it("a lapsed lease logs an unlock", async () => {
    let now = 0;
    const t = await embedded({ clock: () => now, leaseMs: 1_000 });
    open.push(t);
    await t.call("lock-watches", "lapse", { prefixes: [""] });
    const s = snapshot(await t.call("lock-events", "lapse", { since: null }));
    await locked(t, "lapse", "gone");
    now += 5_000;
    const e = events(await t.call("lock-events", "lapse", { since: { logId: s.logId, version: s.version } }));
    expect(e.events.map((x) => x.kind)).toEqual(["lock", "unlock"]);
  });

  it(`keeps the last ${LOCK_EVENTS_KEPT} events: a follower that far behind gets events, one further behind a snapshot`, async () => {
    const t = await embedded();
    open.push(t);
    await t.call("lock-watches", "many", { prefixes: [""] });
    const s = snapshot(await t.call("lock-events", "many", { since: null }));
    const total = LOCK_EVENTS_KEPT + 500;
    for (let i = 0; i < total / 2; i++) {
      const token = await locked(t, "many", `d${i % 7}`);
      await t.call("unlock", "many", { tokens: [token] });
    }
    const last = s.version + total;
    const kept = events(await t.call("lock-events", "many", { since: { logId: s.logId, version: last - LOCK_EVENTS_KEPT } }));
    expect(kept.events).toHaveLength(LOCK_EVENTS_KEPT);
    expect(kept.events[0]?.version).toBe(last - LOCK_EVENTS_KEPT + 1);
    for (let i = 1; i < kept.events.length; i++) expect(kept.events[i]!.version).toBe(kept.events[i - 1]!.version + 1);
    const old = await t.call("lock-events", "many", { since: { logId: s.logId, version: last - LOCK_EVENTS_KEPT - 1 } });
    expect(old.type).toBe("snapshot");
    expect(old.version).toBe(last);
    // A position past the end (another life of the log) is not trusted either.
    expect((await t.call("lock-events", "many", { since: { logId: s.logId, version: last + 1 } })).type).toBe("snapshot");
  });

  it("aborting a waiting long poll ends it with CANCELLED, and a later event wakes nobody", async () => {
    const service = new InMemoryLockService();
    try {
      await service.lockWatches("abort", { prefixes: [""] });
      const s = snapshot(await service.lockEvents("abort", { since: null }));
      const controller = new AbortController();
      const polled = failure(service.lockEvents("abort", { since: { logId: s.logId, version: s.version }, waitMs: 20_000 }, { signal: controller.signal }));
      await new Promise((r) => setTimeout(r, 20));
      const started = performance.now();
      controller.abort();
      expect((await polled).code).toBe("CANCELLED");
      expect(performance.now() - started).toBeLessThan(1_000);
      await service.lock("abort", { locks: [{ descriptor: "x", mode: "exclusive" }] });
      expect(events(await service.lockEvents("abort", { since: { logId: s.logId, version: s.version } })).events).toHaveLength(1);
    } finally {
      await service.close();
    }
  });

  it("closing the service ends a waiting long poll with UNAVAILABLE", async () => {
    const t = await embedded();
    await t.call("lock-watches", "close", { prefixes: [""] });
    const s = snapshot(await t.call("lock-events", "close", { since: null }));
    const polled = failure(t.call("lock-events", "close", { since: { logId: s.logId, version: s.version }, waitMs: 20_000 }));
    await new Promise((r) => setTimeout(r, 20));
    await t.close();
    expect((await polled).code).toBe("UNAVAILABLE");
  });
});
