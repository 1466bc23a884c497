import type { LockResponse, RefreshResponse } from "@leasehold/protocol";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { leaseWaitEnd } from "../../src/cluster/margins.js";
import { startServer, type RunningServer } from "../../src/start-server.js";
import { sleep } from "../support/wait-for.js";
import { op, settled } from "./cluster-support.js";
import { schemaPerTest } from "./pg-schema.js";
import { startTcpProxy } from "./tcp-proxy.js";

const LEADER_LEASE_MS = 1_000;
/** The server-side lock lease: what the new leader must NOT wait (issue 21: 10 s for a 5 s promise). */
const LEASE_MS = 4_000;
/** What the old leader answered in every lease: what the new leader waits, plus the margin. */
const A_VALID_FOR_MS = 2_000;
const B_VALID_FOR_MS = 500;
const NS = "orders";
const lock = (acquireTimeoutMs: number) => ({ locks: [{ descriptor: "d", mode: "exclusive" as const }], acquireTimeoutMs });

describe("cluster: the lease-wait after a leader is cut off is the validForMs it answered plus the margin, not --lease-ms", () => {
  const bed = schemaPerTest<RunningServer>();
  /** Every log line of b (in this process: its `time` is this process's wall clock). */
  const logged: Record<string, unknown>[] = [];

  it("b grants a's lock only once a's last promise has ended, waits exactly a's validForMs plus the margin from the takeover, then lowers the record to its own", async () => {
    const proxy = await startTcpProxy(5432);
    try {
      const throughProxy = bed.schema.connectionString.replace("127.0.0.1:5432", `127.0.0.1:${proxy.port}`);
      const cluster = { leaderLeaseMs: LEADER_LEASE_MS, shards: 1 };
      // a alone leads the one shard until it is cut off.
      const a = await startServer({ leaseMs: LEASE_MS, validForMs: A_VALID_FOR_MS, cluster: { ...cluster, serverId: "z-a", connectionString: throughProxy } });
      bed.open.push(a);
      await settled([a.url]);
      const held = (await op(a.url, NS, "lock", lock(0))).json as LockResponse;
      if (held.status !== "acquired") throw new Error(`a did not grant d: ${JSON.stringify(held)}`);
      expect(held.lease.validForMs).toBe(A_VALID_FOR_MS);
      // a recorded its validForMs with its acquisition, before it served anything.
      expect(await bed.schema.query("SELECT valid_for_ms FROM leases WHERE shard = 0")).toEqual([{ valid_for_ms: A_VALID_FOR_MS }]);
      // a is cut off from PostgreSQL (as dead, for the others): it refreshes d until its gate closes,
      // so its last promise reaches past the moment b can take the shard over.
      proxy.cut();
      // b starts now: after its join wait it takes the expired shard. Its id sorts first, so the
      // one shard is its share even while a's last heartbeat still counts (no balance move).
      const logger = pino({ level: "info" }, { write: (line: string) => void logged.push(JSON.parse(line) as Record<string, unknown>) });
      const starting = startServer({ leaseMs: LEASE_MS, validForMs: B_VALID_FOR_MS, logger, cluster: { ...cluster, serverId: "0-b", connectionString: bed.schema.connectionString } });
      let promiseEnd = 0;
      for (;;) {
        const sent = Date.now();
        const refreshed = await op(a.url, NS, "refresh", { tokens: [held.token] });
        if (refreshed.status !== 200 || (refreshed.json as RefreshResponse).refreshed.length === 0) break;
        promiseEnd = sent + A_VALID_FOR_MS;
        await sleep(20);
      }
      const b = await starting;
      bed.open.push(b);
      let answer = await op(b.url, NS, "lock", lock(15_000));
      while (answer.status !== 200) {
        expect([421, 503]).toContain(answer.status);
        await sleep(20);
        answer = await op(b.url, NS, "lock", lock(15_000));
      }
      const grantedAt = Date.now();
      const granted = answer.json as LockResponse;
      expect(granted.status).toBe("acquired");
      if (granted.status !== "acquired") return;
      expect(granted.lease.leaderId).not.toBe(held.lease.leaderId);

      // The term that granted (should b have lost the shard and retaken it on a loaded machine, its
      // later term, which still waits a out: b's first term never lowered the record).
      const takeover = logged.find((l) => l.msg === "shard acquired" && l.leaderId === granted.lease.leaderId)!;
      expect(takeover).toMatchObject({ shard: 0, lockDelayMs: A_VALID_FOR_MS });
      expect(logged.find((l) => l.msg === "shard acquired")).toMatchObject({ reason: "expired" });
      // Not vacuous: a's last promise reached past the takeover (a grant at takeover would overlap it).
      expect(promiseEnd).toBeGreaterThan(takeover.time as number);
      // The order: b granted d only once a's last promise had ended, and not before a's validForMs
      // plus the margin had passed since the takeover (the acquisition's answer came just before
      // its log line: 5 ms for that step and whole-millisecond clocks).
      expect(grantedAt).toBeGreaterThanOrEqual(promiseEnd);
      expect(grantedAt - (takeover.time as number)).toBeGreaterThanOrEqual(A_VALID_FOR_MS + A_VALID_FOR_MS / 10 - 5);
      // The wait b chose: a's validForMs plus the rate margin (a tenth of it), nowhere near --lease-ms.
      expect(takeover.leaseWaitMs).toBe(leaseWaitEnd(0, A_VALID_FOR_MS, LEADER_LEASE_MS));
      expect(takeover.leaseWaitMs).toBe(A_VALID_FOR_MS + A_VALID_FOR_MS / 10);
      // a's token is void at b.
      expect(((await op(b.url, NS, "refresh", { tokens: [held.token] })).json as RefreshResponse).refreshed).toEqual([]);

      // b waited a out: the record is lowered to b's own validForMs, by b's term (fenced by its epoch).
      const deadline = Date.now() + 5_000;
      const lowered = (): boolean => logged.some((l) => l.msg === "lease-wait record lowered to this term's validForMs" && l.epoch === takeover.epoch && l.matched === true);
      while (!lowered() && Date.now() < deadline) await sleep(20);
      expect(lowered()).toBe(true);
      // (A later term of b, should b have lost and retaken the shard on a loaded machine, records the same.)
      expect(await bed.schema.query("SELECT valid_for_ms FROM leases WHERE shard = 0")).toEqual([{ valid_for_ms: B_VALID_FOR_MS }]);
    } finally {
      proxy.restore();
      await proxy.close();
    }
  }, 45_000);
});
