import type { TimestampsResponse } from "@leasehold/protocol";
import { describe, expect, it } from "vitest";
import { startCli, type CliProcess } from "../support/cli-process.js";
import { sleep } from "../support/wait-for.js";
import { ledBy, namespaceLedBy, op, settled } from "./cluster-support.js";
import { cliSchemaPerTest } from "./cli-schema-per-test.js";

const LEADER_LEASE_MS = 500;

/** Timestamps of one namespace asked of every server in turn, one request at a time. */
class TimestampLog {
  readonly served: { server: string; start: number }[] = [];
  private highest = 0;
  /** Answers that came back below one answered earlier (a timestamp going backwards). */
  readonly backwards: string[] = [];

  constructor(private readonly namespace: string) {}

  /** Ask each server once, in order; 421/503 are fine, a 200 must be above every earlier 200. */
  async round(servers: readonly { name: string; url: string }[]): Promise<void> {
    for (const { name, url } of servers) {
      const answer = await op(url, this.namespace, "timestamps", { count: 1 }).catch(() => null);
      if (answer?.status !== 200) continue;
      const start = (answer.json as TimestampsResponse).start;
      if (start <= this.highest) this.backwards.push(`${name} answered ${start} after ${this.highest} had been answered`);
      this.highest = Math.max(this.highest, start);
      this.served.push({ server: name, start });
    }
  }
}

const logged = (server: CliProcess, msg: string | RegExp): Record<string, unknown>[] =>
  server.lines.filter((l) => typeof l.msg === "string" && (typeof msg === "string" ? l.msg === msg : msg.test(l.msg)));

describe("cluster CLI: two live processes with one --server-id", () => {
  const bed = cliSchemaPerTest();
  const running = bed.running;
  const start = async (serverId: string): Promise<CliProcess> => {
    const server = await startCli([
      "--port", "0",
      "--cluster", bed.schema.connectionString,
      "--server-id", serverId,
      "--leader-lease-ms", String(LEADER_LEASE_MS),
      "--shards", "2",
      "--lease-ms", "1000",
      "--log-level", "debug",
    ]);
    running.push(server);
    return server;
  };


  it("the second waits as a plain member (no shard released under the live one, timestamps never go backwards) and takes the id once the first's heartbeat lapses", async () => {
    const [first, other] = await Promise.all([start("dup"), start("other")]);
    const map = await settled([first.url, other.url], 15_000, (m) => ledBy(m, first.url) === 1 && ledBy(m, other.url) === 1);
    const shard = map.leaders.findIndex((l) => l.leaderUrl === first.url);
    const ns = namespaceLedBy(map, first.url, "dup");
    const log = new TimestampLog(ns);
    await log.round([{ name: "first", url: first.url }]);
    const epochBefore = (await bed.schema.query<{ epoch: string }>("SELECT epoch FROM leases WHERE shard = $1", [shard]))[0]!.epoch;

    const linesBefore = first.lines.length;
    const second = await start("dup");
    const servers = [
      { name: "first", url: first.url },
      { name: "second", url: second.url },
      { name: "other", url: other.url },
    ];
    // Four leader leases with both processes alive: well past the second's first pass (which used
    // to release the first's rows as "its own lost acquisitions") and its join wait.
    const until = performance.now() + LEADER_LEASE_MS * 4;
    while (performance.now() < until) await log.round(servers);
    expect(log.backwards).toEqual([]);
    // The first never lost its shard: nothing was released under it.
    expect(logged(first, "shard lost").filter((l) => first.lines.indexOf(l) >= linesBefore)).toEqual([]);
    expect((await bed.schema.query<{ epoch: string; holder: string }>("SELECT epoch, holder FROM leases WHERE shard = $1", [shard]))[0]).toEqual({ epoch: epochBefore, holder: "dup" });
    expect(log.served.filter((s) => s.server === "first").length).toBeGreaterThan(3);
    // The second leads nothing, says why (naming the id), and is not counted as a member twice.
    expect(logged(second, "shard acquired")).toEqual([]);
    expect(logged(second, /another live process runs with --server-id "dup"/)).toHaveLength(1);
    expect((await bed.schema.query<{ n: string }>("SELECT count(*) AS n FROM members"))[0]!.n).toBe("2");

    // The first dies: once its heartbeat lapses (two leader leases), the second takes the id over,
    // waits its join wait and gets its share; timestamps still never go backwards.
    first.child.kill("SIGKILL");
    await first.exited;
    const deadline = performance.now() + 15_000;
    for (;;) {
      await log.round(servers.slice(1));
      const taken = logged(second, /this one now takes its place/).length === 1;
      const current = await settled([second.url, other.url], 5_000).catch(() => null);
      if (taken && current !== null && ledBy(current, second.url) === 1 && ledBy(current, other.url) === 1) break;
      if (performance.now() > deadline) throw new Error(`the second process never took over: ${JSON.stringify(second.lines.slice(-5))}`);
      await sleep(50);
    }
    await log.round(servers.slice(1));
    expect(log.backwards).toEqual([]);
    expect(log.served.some((s) => s.server !== "first")).toBe(true);
  }, 60_000);
});
