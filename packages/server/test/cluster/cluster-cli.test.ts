import type { TimestampsResponse } from "@leasehold/protocol";
import { describe, expect, it } from "vitest";
import { startCli, type CliProcess } from "../support/cli-process.js";
import { sleep } from "../support/wait-for.js";
import { ledBy, namespaceLedBy, op, settled } from "./cluster-support.js";
import { cliSchemaPerTest } from "./cli-schema-per-test.js";

const LEADER_LEASE_MS = 500;

/** Serve intervals a server logged (test mode: --log-level debug) for one shard, by epoch. */
function intervals(server: CliProcess, shard: number): { epoch: number; from: number; to: number }[] {
  const byEpoch = new Map<number, { epoch: number; from: number; to: number }>();
  for (const line of server.lines) {
    if (line.msg !== "serve interval" || line.shard !== shard) continue;
    const epoch = line.epoch as number;
    const seen = byEpoch.get(epoch);
    byEpoch.set(epoch, { epoch, from: Math.min(seen?.from ?? Infinity, line.from as number), to: Math.max(seen?.to ?? -Infinity, line.to as number) });
  }
  return [...byEpoch.values()];
}

describe("cluster CLI: failover of a crashed or paused leader", () => {
  const bed = cliSchemaPerTest();
  const running = bed.running;
  /** `replicas` "0" for the path without a standby (the default, 1, takes over with the table). */
  const start = async (replicas = "1"): Promise<CliProcess> => {
    const server = await startCli([
      "--replicas", replicas,
      "--port", "0",
      "--cluster", bed.schema.connectionString,
      "--leader-lease-ms", String(LEADER_LEASE_MS),
      "--shards", "2",
      "--lease-ms", "1000",
      "--log-level", "debug",
    ]);
    running.push(server);
    return server;
  };


  it("SIGKILL of a leader: the survivor takes over after the lease and continues timestamps above the dead leader's", async () => {
    // Without standbys: a takeover with an empty table (with one: replication/cluster-takeover-with-state.test.ts).
    const a = await start("0");
    const b = await start("0");
    const map = await settled([a.url, b.url], 15_000, (m) => ledBy(m, a.url) === 1 && ledBy(m, b.url) === 1);
    const ns = namespaceLedBy(map, a.url);
    const before = (await op(a.url, ns, "timestamps", { count: 1_000 })).json as TimestampsResponse;
    a.child.kill("SIGKILL");
    const killedAt = performance.now();
    let answer = await op(b.url, ns, "timestamps", { count: 1 });
    while (answer.status !== 200) {
      expect([421, 503]).toContain(answer.status);
      await sleep(10);
      answer = await op(b.url, ns, "timestamps", { count: 1 });
    }
    const failoverMs = performance.now() - killedAt;
    expect((answer.json as TimestampsResponse).start).toBeGreaterThan(before.start + before.count - 1);
    // Not before a whole leader lease of silence could have been watched (the dead leader's last
    // renewal was at most a third of a lease before the kill), and not much later.
    expect(failoverMs).toBeGreaterThan((LEADER_LEASE_MS * 2) / 3 - 50);
    expect(failoverMs).toBeLessThan(LEADER_LEASE_MS * 4);
    // The takeover is logged with a new epoch, above every epoch the dead leader held the shard in.
    const shard = map.leaders.findIndex((l) => l.leaderUrl === a.url);
    const deadEpochs = a.lines.filter((l) => l.msg === "shard acquired" && l.shard === shard).map((l) => l.epoch as number);
    const takeover = b.lines.find((l) => l.msg === "shard acquired" && l.shard === shard && l.reason === "expired");
    expect(takeover?.epoch).toBeGreaterThan(Math.max(...deadEpochs));
  });

  it("SIGSTOP of a leader for 1.5 leader leases: on SIGCONT it answers 421/503, never a grant, and the serve intervals do not overlap", async () => {
    const a = await start();
    const b = await start();
    const map = await settled([a.url, b.url], 15_000, (m) => ledBy(m, a.url) === 1 && ledBy(m, b.url) === 1);
    const ns = namespaceLedBy(map, a.url);
    const shard = map.leaders.findIndex((l) => l.leaderUrl === a.url);
    expect((await op(a.url, ns, "timestamps", { count: 1 })).status).toBe(200);
    a.child.kill("SIGSTOP");
    let answer = await op(b.url, ns, "timestamps", { count: 1 });
    while (answer.status !== 200) {
      await sleep(10);
      answer = await op(b.url, ns, "timestamps", { count: 1 });
    }
    a.child.kill("SIGCONT");
    // The paused leader's first answers after resuming: its gate closed while it was stopped.
    const after = await Promise.all([
      op(a.url, ns, "timestamps", { count: 1 }),
      op(a.url, ns, "lock", { locks: [{ descriptor: "d", mode: "exclusive" }] }),
    ]);
    for (const r of after) expect([421, 503]).toContain(r.status);
    await sleep(LEADER_LEASE_MS);
    const lost = a.lines.find((l) => l.msg === "shard lost" && l.shard === shard);
    expect(lost).toBeDefined();
    // No two leaders of the shard served in overlapping time.
    const all = [...intervals(a, shard), ...intervals(b, shard)].sort((x, y) => x.epoch - y.epoch);
    expect(all.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < all.length; i++) expect(all[i]!.from).toBeGreaterThan(all[i - 1]!.to);
  });
});
