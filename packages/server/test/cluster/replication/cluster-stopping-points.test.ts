import { LeaseholdError } from "@leasehold/protocol";
import { describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../../src/start-server.js";
import { waitFor } from "../../support/wait-for.js";
import { ledBy, namespaceLedBy, op, settled } from "../cluster-support.js";
import { schemaPerTest } from "../pg-schema.js";

const LEADER_LEASE_MS = 1_000;

describe("cluster servers with --replicas 1: a stopping leader points at the server it handed the shard to", () => {
  const bed = schemaPerTest<RunningServer>();

  it("once the shard is handed over, the old leader answers 421 NOT_LEADER naming the taker (not the shutting-down 503), and the taker grants", async () => {
    const cluster = (serverId: string) => ({ connectionString: bed.schema.connectionString, leaderLeaseMs: LEADER_LEASE_MS, shards: 1, serverId, replicas: 1 as const });
    const a = await startServer({ leaseMs: 30_000, cluster: cluster("stop-a") });
    bed.open.push(a);
    await settled([a.url], 15_000, (m) => ledBy(m, a.url) === 1);
    const b = await startServer({ leaseMs: 30_000, cluster: cluster("stop-b") });
    bed.open.push(b);
    let inSync = false;
    await waitFor(() => {
      void bed.schema.query<{ in_sync: boolean }>("SELECT in_sync FROM leases").then((r) => (inSync = r[0]?.in_sync === true));
      return inSync;
    }, "b in sync as a's standby", 15_000);
    const ns = namespaceLedBy(await settled([a.url, b.url], 15_000, (m) => ledBy(m, a.url) === 1), a.url);
    const held = await a.service.lock(ns, { locks: [{ descriptor: "held", mode: "exclusive" }], acquireTimeoutMs: 0 });
    expect(held.status).toBe("acquired");

    // The stop hands the shard over (b is in sync) before it resolves. A request that still
    // reaches a after that (a connection not yet closed, the embedded API) is pointed at b.
    await a.close();
    const answer = await a.service.lock(ns, { locks: [{ descriptor: "free", mode: "exclusive" }], acquireTimeoutMs: 0 }).then(
      (granted) => granted,
      (err: unknown) => err,
    );
    expect(answer).toBeInstanceOf(LeaseholdError);
    expect(answer).toMatchObject({ code: "NOT_LEADER", details: { shard: 0, leaderUrl: b.url } });
    // A namespace of no shard it knows another server holds (none here: one shard) would get the
    // shutting-down 503; the taker serves the namespace with the held lock carried.
    // b may still be adopting (its view naming a: 421, or loading: 503): re-sent as a client would.
    const lockAtB = async (descriptor: string): Promise<unknown> => {
      for (let i = 0; ; i++) {
        const res = await op(b.url, ns, "lock", { locks: [{ descriptor, mode: "exclusive" }], acquireTimeoutMs: 0 });
        if (res.status === 200 || i > 200) return res.json;
        expect([421, 503]).toContain(res.status);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    expect(await lockAtB("held")).toMatchObject({ status: "timeout" });
    expect(await lockAtB("free")).toMatchObject({ status: "acquired" });
  }, 45_000);
});
