import { describe, expect, it } from "vitest";
import { startCli, type CliProcess } from "../support/cli-process.js";
import { sleep } from "../support/wait-for.js";
import { startLatencyProxies, type LatencyProxies } from "./latency-proxies.js";
import { createTestSchema } from "./pg-schema.js";

/**
 * Cold starts per run: 1 in the test command (about 11 s), 20 in soak mode (`LEASEHOLD_SOAK=1`),
 * where a failure one start in five (the one seen before the fix) shows with near certainty.
 */
const STARTS = process.env.LEASEHOLD_SOAK === "1" ? 20 : 1;
/** The target: every shard led this soon after the last server's `listening` line. */
const TARGET_MS = 5_000;
/**
 * What a start must meet: the target in soak mode, where 20 starts measure it; in the test
 * command, every shard led at all within four times it (a start that leaves shards unled, as the
 * failure seen before did, still fails), because a timed target on a shared 2-core machine is a
 * benchmark's job (measured 4.3 s quiet, 5.2–5.9 s at a load average of 12–30).
 */
const BOUND_MS = STARTS > 1 ? TARGET_MS : 4 * TARGET_MS;
const SHARDS = 64;
/**
 * Held in each direction on every server's PostgreSQL link (a 100 ms round trip): a stand-in for
 * the loaded machine the failure was seen on, where 64 acquisitions at once waited past the
 * statement pool's connect timeout and failed unsent.
 */
const ONE_WAY_MS = 50;

describe("cluster CLI: three servers started together on a fresh database", () => {
  it(`lead all ${SHARDS} shards within ${BOUND_MS / 1000} s of the last listening line (target ${TARGET_MS / 1000} s), ${STARTS} cold start(s) in a row`, async () => {
    const times: number[] = [];
    let proxies: LatencyProxies | null = null;
    for (let run = 0; run < STARTS; run++) {
      const schema = await createTestSchema();
      const servers: CliProcess[] = [];
      try {
        // Default leader lease (3 s: the join wait is one lease) and shard count, as an operator starts them.
        proxies = await startLatencyProxies(3);
        await proxies.setLatency(ONE_WAY_MS);
        const started = await Promise.allSettled(proxies.ports.map((port) => startCli(["--port", "0", "--cluster", schema.connectionString.replace("127.0.0.1:5432", `127.0.0.1:${port}`)])));
        for (const s of started) if (s.status === "fulfilled") servers.push(s.value);
        for (const s of started) if (s.status === "rejected") throw s.reason;
        const lastListening = performance.now();
        let ledAfter = Infinity;
        while (performance.now() - lastListening < BOUND_MS + 1_000) {
          const [row] = await schema.query<{ n: number }>("SELECT count(*)::int AS n FROM leases WHERE holder IS NOT NULL AND expires_at > clock_timestamp()");
          if (row?.n === SHARDS) {
            ledAfter = performance.now() - lastListening;
            break;
          }
          await sleep(20);
        }
        times.push(Math.round(ledAfter));
      } finally {
        for (const server of servers) server.child.kill("SIGKILL");
        await Promise.all(servers.map((s) => s.exited));
        await proxies?.close();
        proxies = null;
        await schema.drop();
      }
    }
    console.log(`cold starts, ms from the last listening line to all ${SHARDS} shards led: ${times.join(", ")}`);
    // Every one, not most: the failure seen before was one start in five (with these 100 ms round
    // trips, the old planning and its 64 acquisitions at once missed the target in every start).
    expect(times.every((t) => t <= BOUND_MS), `ms from the last listening line to all shards led: ${times.join(", ")} (bound ${BOUND_MS} ms)`).toBe(true);
  }, STARTS * 30_000);
});
