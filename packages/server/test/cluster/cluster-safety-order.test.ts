import type { LockResponse } from "@leasehold/protocol";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { Coordinator } from "../../src/cluster/coordinator.js";
import { createClusterMember } from "../../src/cluster/create-cluster-service.js";
import { createPostgresCoordinator } from "../../src/cluster/postgres/postgres-coordinator.js";
import { startServer } from "../../src/start-server.js";
import { sleep } from "../support/wait-for.js";
import { op, settled } from "./cluster-support.js";
import { schemaPerTest, type Closable } from "./pg-schema.js";

const LEADER_LEASE_MS = 1_000;
/** The runtime's margin for this lease: `max(20, ⌊leaderLease / 10⌋)` (margins.ts `gateMargin`, set in cluster-passes.ts). */
const MARGIN = Math.max(20, Math.floor(LEADER_LEASE_MS / 10));
const HOLD_MS = 300;

/** The real PostgreSQL coordinator with some statements held back or refused by the test. */
function interposed(connectionString: string, over: (inner: Coordinator) => Partial<Coordinator>): Coordinator {
  const inner = createPostgresCoordinator({ connectionString, statementTimeoutMs: Math.floor(LEADER_LEASE_MS / 3) });
  return { ...inner, ...over(inner) };
}

describe("cluster safety rules that only timing shows (mutation items 1, 2 and 5 of issue 20)", () => {
  const bed = schemaPerTest<Closable>();

  it("the gate counts from when the renewal was sent, less the margin: a committed renewal answering 300 ms late buys nothing", async () => {
    let mode: "pass" | "hold" | "refuse" = "pass";
    let heldSentAt: number | null = null;
    const coordinator = interposed(bed.schema.connectionString, (inner) => ({
      async renew(serverId, terms, leaderLeaseMs) {
        if (mode === "refuse") throw new Error("renewal refused by the test");
        // Read right after the runtime read its clock for this renewal (the same clock, one process).
        const sentAt = performance.now();
        const renewed = await inner.renew(serverId, terms, leaderLeaseMs);
        if (mode === "hold" && renewed.length > 0) {
          // Committed; its answer is held back, and every later renewal fails.
          mode = "refuse";
          heldSentAt = sentAt;
          await sleep(HOLD_MS);
        }
        return renewed;
      },
      async acquire(...args) {
        // Once the test began, the shard is never taken again (a new term would serve anew).
        if (mode !== "pass") throw new Error("acquisition refused by the test");
        return inner.acquire(...args);
      },
    }));
    // The member without HTTP: over sockets on a loaded machine a request sent before the gate
    // closed is often processed 100 ms or more after it, hiding a gate that closes that much late.
    // Called in process, an operation's send time is its serve time, to the millisecond.
    const member = await createClusterMember(
      { connectionString: bed.schema.connectionString, coordinator, leaderLeaseMs: LEADER_LEASE_MS, shards: 1 },
      { leaseMs: 1_000, logger: pino({ level: "silent" }), version: "test", url: "http://127.0.0.1:1" },
    );
    bed.open.push({ close: () => member.service.close() });
    await member.runtime.start();
    const deadline = performance.now() + 10 * LEADER_LEASE_MS;
    while (member.runtime.shardsLed === 0 && performance.now() < deadline) await sleep(10);
    expect((await member.service.timestamps("gate", { count: 1 })).count).toBe(1);

    // Timestamps back to back (a macrotask between two, so the runtime's timers and statements run),
    // each noted with when it was asked for.
    const served: number[] = [];
    const refused: number[] = [];
    mode = "hold";
    let stopAt = Infinity;
    while (performance.now() < stopAt) {
      const sentAt = performance.now();
      await member.service.timestamps("gate", { count: 1 }).then(
        () => served.push(sentAt),
        () => refused.push(sentAt),
      );
      await new Promise((resolve) => setImmediate(resolve));
      // Run on well past when even a gate counted from the answer, without a margin, would close.
      if (heldSentAt !== null) stopAt = heldSentAt + HOLD_MS + LEADER_LEASE_MS + 100;
      else if (sentAt > deadline) throw new Error("no renewal was held");
    }

    const bound = heldSentAt! + LEADER_LEASE_MS - MARGIN;
    const lastServed = served.reduce((a, b) => Math.max(a, b), -Infinity) - bound;
    const firstRefused = refused.reduce((a, b) => Math.min(a, b), Infinity) - bound;
    // The rule: nothing asked for after t_sent + leaderLease − margin was served.
    expect(lastServed).toBeLessThanOrEqual(0);
    // And the test looked where a broken rule would show: served up to a few ms before the bound
    // and refused from a few ms after it (the gate is counted from the runtime's own clock reading,
    // a moment before this test's), so a gate counted from the answer (300 ms later) or without
    // the margin (100 ms later) serves operations the test asked for after the bound.
    expect(lastServed).toBeGreaterThan(-MARGIN / 4);
    expect(firstRefused).toBeLessThan(MARGIN / 4);
  });

  it("SIGTERM ends the term (a queued waiter's 503) before the shard's release is even sent to PostgreSQL", async () => {
    let releaseSentAt: number | null = null;
    let holderWhen503: string | null | undefined;
    const coordinator = interposed(bed.schema.connectionString, (inner) => ({
      async release(serverId, terms) {
        // Held back before it is sent: it commits at least HOLD_MS after stop() began.
        await sleep(HOLD_MS);
        releaseSentAt = performance.now();
        return inner.release(serverId, terms);
      },
    }));
    const server = await startServer({ leaseMs: 10_000, cluster: { connectionString: bed.schema.connectionString, coordinator, leaderLeaseMs: LEADER_LEASE_MS, shards: 1 } });
    bed.open.push(server);
    await settled([server.url]);
    const held = (await op(server.url, "term", "lock", { locks: [{ descriptor: "d", mode: "exclusive" }] })).json as LockResponse;
    expect(held.status).toBe("acquired");
    let answeredAt = 0;
    const waiter = op(server.url, "term", "lock", { locks: [{ descriptor: "d", mode: "exclusive" }], acquireTimeoutMs: 20_000 }).then(async (answer) => {
      answeredAt = performance.now();
      // Still led in PostgreSQL when the waiter heard it must go elsewhere.
      holderWhen503 = (await bed.schema.query<{ holder: string | null }>("SELECT holder FROM leases WHERE shard = 0"))[0]?.holder;
      return answer;
    });
    await sleep(100);
    const closing = server.close();
    const answer = await waiter;
    await closing;
    expect(answer.status).toBe(503);
    expect(releaseSentAt).not.toBeNull();
    expect(answeredAt).toBeLessThan(releaseSentAt!);
    expect(holderWhen503).not.toBeNull();
    expect((await bed.schema.query<{ holder: string | null }>("SELECT holder FROM leases WHERE shard = 0"))[0]?.holder).toBeNull();
  });
});
