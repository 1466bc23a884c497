import type { LockResponse } from "@leasehold/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { sleep } from "../../support/wait-for.js";
import type { CliProcess } from "../../support/cli-process.js";
import { createTestSchema } from "../pg-schema.js";
import { ledBy, namespaceLedBy, op, settled } from "../cluster-support.js";
import { startDroppingProxy, type DroppingProxy } from "../dropping-proxy.js";
import { replicatedCli, rowsUntil } from "./replicated-cli.js";
import { SOAK } from "../../support/soak.js";

const LEADER_LEASE_MS = 1_200;
/** validForMs is half of it: 10 s, far beyond the takeover. */
const LEASE_MS = 20_000;
/** How many times the scenario runs (`LEASEHOLD_RETRY_RUNS`; issue 29 asks for at least 10 in a recorded run). */
const RUNS = Number(process.env.LEASEHOLD_RETRY_RUNS ?? 1);

type Acquired = Extract<LockResponse, { status: "acquired" }>;

/** What one run saw: when a client was first told it holds `x` (ms since the epoch), and when another was granted it. */
interface RetryRun {
  readonly toldAt: number | null;
  readonly validForMs: number;
  readonly secondAt: number | null;
  readonly tookOver: boolean;
}

describe("issue 29 item 1: a retry with the same requestId during a partition, then a crash", () => {
  const proxies: DroppingProxy[] = [];
  const running: CliProcess[] = [];
  const drops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const s of running.splice(0)) {
      s.child.kill("SIGKILL");
      await s.exited;
    }
    for (const p of proxies.splice(0)) await p.close();
    for (const drop of drops.splice(0)) await drop();
  });

  /**
   * The outside check's scenario: a leads the shard, b is its in-sync standby behind a proxy;
   * the proxy stops passing bytes; a lock with requestId r goes to a, the same request again on
   * another connection 60 ms later; a is SIGKILLed within a third of the leader lease (the row still
   * says in sync), the partition heals and b takes over with its replica; another client then asks
   * for `x` at b until it gets it.
   */
  async function run(i: number, leaderBreak?: string): Promise<RetryRun> {
    // A schema of its own per run: each run is a new cluster.
    const bed = { schema: await createTestSchema(), running };
    drops.push(() => bed.schema.drop());
    const start = replicatedCli(bed, { leaderLeaseMs: LEADER_LEASE_MS, shards: 1, leaseMs: LEASE_MS });
    const a = await start(leaderBreak, `rp${i}-a`);
    await settled([a.url], 20_000, (m) => ledBy(m, a.url) === 1);
    const proxy = await startDroppingProxy();
    proxies.push(proxy);
    const b = await start(undefined, `rp${i}-b`, ["--advertise-url", proxy.url]);
    proxy.target(Number(new URL(b.url).port));
    await rowsUntil(bed, "b in sync as a's standby", (rows) => rows[0]?.in_sync === true);
    const ns = namespaceLedBy(await settled([a.url], 20_000, (m) => ledBy(m, a.url) === 1), a.url);
    const request = { locks: [{ descriptor: "x", mode: "exclusive" }], acquireTimeoutMs: 0, requestId: `r-${i}` };
    proxy.partition();
    let toldAt: number | null = null;
    let validForMs = 0;
    const told = (answer: { status: number; json: unknown }): void => {
      const lock = answer.json as LockResponse;
      if (answer.status === 200 && lock.status === "acquired" && toldAt === null) {
        toldAt = Date.now();
        validForMs = (lock as Acquired).lease.validForMs;
      }
    };
    const sends = [op(a.url, ns, "lock", request).then(told, () => undefined)];
    await sleep(60);
    sends.push(op(a.url, ns, "lock", request).then(told, () => undefined));
    await sleep(80);
    a.child.kill("SIGKILL");
    await a.exited;
    await Promise.all(sends);
    proxy.heal();
    // Another client asks b for x until granted (or long past any takeover).
    const deadline = Date.now() + 8 * LEADER_LEASE_MS;
    let secondAt: number | null = null;
    let tookOver = false;
    while (secondAt === null && Date.now() < deadline) {
      const answer = await op(b.url, ns, "lock", { locks: [{ descriptor: "x", mode: "exclusive" }], acquireTimeoutMs: 0 });
      if (answer.status === 200) tookOver = true;
      if (answer.status === 200 && (answer.json as LockResponse).status === "acquired") secondAt = Date.now();
      else await sleep(50);
    }
    for (const s of running.splice(0)) {
      s.child.kill("SIGKILL");
      await s.exited;
    }
    return { toldAt, validForMs, secondAt, tookOver };
  }

  const doubleGrant = (r: RetryRun): boolean => r.toldAt !== null && r.secondAt !== null && r.secondAt < r.toldAt + r.validForMs;

  it(`never yields a second holder within the first's validForMs (${RUNS} run${RUNS === 1 ? "" : "s"})`, async () => {
    const runs: RetryRun[] = [];
    for (let i = 0; i < RUNS; i++) runs.push(await run(i));
    // Not vacuous: b took the shard over in every run and answered lock requests.
    expect(runs.every((r) => r.tookOver)).toBe(true);
    expect(runs.filter(doubleGrant)).toEqual([]);
  }, 60_000 * RUNS);

  // Soak mode only: in the test command the simulator's control of this rule stands for it.
  it.runIf(SOAK)("negative control: with retry-before-ack the retry is answered at once and b grants x to a second holder", async () => {
    const r = await run(0, "retry-before-ack");
    expect(r.toldAt).not.toBeNull();
    expect(doubleGrant(r)).toBe(true);
  }, 60_000);
});
