import { LockClient } from "@leasehold/client";
import type { Figure, Suite } from "../figures.js";
import { startServerProcess } from "../server-process.js";
import { nowMs, nowNs, quantile, round } from "../stats.js";
import { silentLogger } from "../silent-logger.js";

/**
 * Committers doing lock then tryUnlock for `ms`; returns pairs and the client's unlock stats.
 * `target` is one server's URL, or a cluster's URLs (`baseUrls`: routed by shard).
 */
export async function committers(target: string | readonly string[], concurrency: number, ms: number, namespace: string) {
  const where = typeof target === "string" ? { baseUrl: target } : { baseUrls: [...target] };
  const client = LockClient.http({ ...where, namespace, logger: silentLogger() });
  let pairs = 0;
  const end = nowMs() + ms;
  const start = nowMs();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, i) => {
      let n = 0;
      while (nowMs() < end) {
        // Keys of its own, cycling over 256: an unlock sent in the background has long landed by
        // the time a key comes round again; if not, the lock waits for it (as a committer would).
        const res = await client.lock([{ descriptor: `c${i}-k${n++ % 256}`, mode: "exclusive" }], { acquireTimeoutMs: 5_000 });
        if (res.status !== "acquired") throw new Error("lock on the caller's own key was not granted within 5 s");
        client.tryUnlock([res.token]);
        pairs++;
      }
    }),
  );
  const elapsed = (nowMs() - start) / 1000;
  await client.close();
  const stats = client.stats();
  return { pairs, elapsed, unlockCalls: stats.unlockCalls, tokens: stats.tokensEnqueued, failures: stats.unlockFailures };
}

/** The caller's cost of `tryUnlock`, lock by lock, with the flusher running in the background. */
export async function tryUnlockCost(baseUrl: string, samples: number): Promise<number[]> {
  const client = LockClient.http({ baseUrl, namespace: "bench-tryunlock", logger: silentLogger() });
  const costs: number[] = [];
  const tokens: string[] = [];
  for (let i = 0; i < samples; i++) {
    const res = await client.lock([{ descriptor: `t-${i}`, mode: "exclusive" }]);
    if (res.status !== "acquired") throw new Error("lock was not granted");
    tokens.push(res.token);
  }
  for (const token of tokens) {
    const t0 = nowNs();
    client.tryUnlock([token]);
    costs.push(nowNs() - t0);
    // Let the flusher run between calls, as between real commits.
    if (costs.length % 64 === 0) await new Promise((r) => setImmediate(r));
  }
  await client.close();
  return costs;
}

/**
 * Client figures over loopback HTTP to a server in a child process: the caller's cost of
 * `tryUnlock`, unlock calls per 1,000 tokens at 1, 8 and 64 committers, and lock+tryUnlock
 * throughput at 64 callers.
 */
export const clientSuite: Suite = {
  name: "client",
  description: "LockClient over HTTP: tryUnlock cost, unlock batching, lock+tryUnlock throughput",
  async run(ctx) {
    const server = await startServerProcess();
    const figures: Figure[] = [];
    const base = { command: ctx.command, quick: ctx.quick };
    try {
      const costs = await tryUnlockCost(server.url, ctx.quick ? 5_000 : 20_000);
      figures.push(
        { name: "tryunlock_ns_p50", value: round(quantile(costs, 0.5), 0), unit: "ns", ...base, note: `${costs.length} calls, each timed around the synchronous call` },
        { name: "tryunlock_ns_p99", value: round(quantile(costs, 0.99), 0), unit: "ns", ...base, note: `${costs.length} calls` },
      );
      ctx.progress(`tryUnlock: p50 ${quantile(costs, 0.5)} ns, p99 ${quantile(costs, 0.99)} ns`);
      // Rounds of a few seconds, each with a fresh client, reported as the median: on a shared
      // 2-core machine one long round is at the mercy of whatever else runs during it.
      const ms = ctx.quick ? 2_000 : 4_000;
      const rounds = ctx.quick ? 1 : 3;
      for (const c of [1, 8, 64]) {
        await committers(server.url, c, ctx.quick ? 300 : 1000, `bench-warm-${c}`);
        const rates: number[] = [];
        let tokens = 0;
        let calls = 0;
        for (let r = 0; r < rounds; r++) {
          const run = await committers(server.url, c, ms, `bench-c${c}`);
          if (run.failures > 0) throw new Error(`${run.failures} unlock calls failed during the benchmark`);
          rates.push(run.pairs / run.elapsed);
          tokens += run.tokens;
          calls += run.unlockCalls;
        }
        const per1000 = (calls / tokens) * 1000;
        const rate = quantile(rates, 0.5);
        figures.push({ name: `unlock_calls_per_1000_tokens_c${c}`, value: round(per1000, 1), unit: "calls", ...base, note: `${c} committers doing lock then tryUnlock, ${rounds} × ${ms / 1000} s: ${tokens} tokens in ${calls} unlock calls` });
        ctx.progress(`c${c}: ${round(per1000, 1)} unlock calls per 1000 tokens, ${rates.map((x) => Math.round(x)).join(" / ")} pairs/s`);
        if (c === 64) {
          figures.push({ name: "http_lock_tryunlock_pairs_per_s_c64", value: round(rate, 0), unit: "pairs/s", ...base, note: `64 concurrent callers on one LockClient, lock then tryUnlock; median of ${rounds} rounds of ${ms / 1000} s (${rates.map((x) => Math.round(x)).join(", ")})` });
        }
      }
      return figures;
    } finally {
      await server.stop();
    }
  },
};
