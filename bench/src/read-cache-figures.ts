import type { Figure } from "./figures.js";
import { measureWatchOverhead, medianRate } from "./lock-watch-overhead.js";
import { startServerProcess } from "./server-process.js";
import { quantile, round } from "./stats.js";
import { hotSetStore, readHeavy } from "./txn-read-cache.js";

/**
 * The read cache's figures (issue 22): the read-heavy workload over PostgreSQL with and without the
 * cache, and the cost of lock events on lock+tryUnlock at 64 callers. Each on a server process of
 * its own: 2 s leases for the cache (it stays cold for a lease after it first sees a lock table).
 */
export async function readCacheFigures(ctx: { readonly quick: boolean; readonly command: string; progress(message: string): void }): Promise<Figure[]> {
  const base = { command: ctx.command, quick: ctx.quick };
  const figures: Figure[] = [];
  const server = await startServerProcess({ leaseMs: 2_000 });
  try {
    const hot = await hotSetStore(server.url);
    try {
      const ms = ctx.quick ? 6_000 : 10_000;
      const warm = ctx.quick ? 5_000 : 8_000;
      const without = await readHeavy(server.url, hot.store, false, ms, warm);
      const withCache = await readHeavy(server.url, hot.store, true, ms, warm);
      const rate = (r: typeof without) => r.committed / r.seconds;
      const p50 = (r: typeof without) => quantile(r.readsUs, 0.5);
      const hitRate = withCache.hits / Math.max(1, withCache.hits + withCache.misses);
      const note = `64 workers, 4 reads per transaction over 1,000 hot rows, 10% of transactions write one; PostgreSQL store; ${ms / 1000} s per mode after ${warm / 1000} s warm-up`;
      figures.push(
        { name: "txn_read_cache_hit_rate", value: round(hitRate, 3), unit: "ratio", ...base, note: `${withCache.hits} hits, ${withCache.misses} misses; ${note}` },
        { name: "txn_read_heavy_per_s_no_cache", value: round(rate(without), 0), unit: "txn/s", ...base, note: `${without.committed} committed; ${note}` },
        { name: "txn_read_heavy_per_s_cache", value: round(rate(withCache), 0), unit: "txn/s", ...base, note: `${withCache.committed} committed; ${note}` },
        { name: "txn_read_heavy_ratio_cache_over_no_cache", value: round(rate(withCache) / rate(without), 2), unit: "ratio", ...base, note },
        { name: "txn_read_p50_us_no_cache", value: round(p50(without), 1), unit: "µs", ...base, note: `${without.readsUs.length} reads; ${note}` },
        { name: "txn_read_p50_us_cache", value: round(p50(withCache), 1), unit: "µs", ...base, note: `${withCache.readsUs.length} reads; ${note}` },
        { name: "txn_read_p50_ratio_no_cache_over_cache", value: round(p50(without) / p50(withCache), 1), unit: "ratio", ...base, note },
      );
      ctx.progress(`read-heavy over PostgreSQL: hit rate ${round(hitRate, 3)}, ${Math.round(rate(without))} → ${Math.round(rate(withCache))} txn/s, p50 read ${round(p50(without), 1)} → ${round(p50(withCache), 1)} µs`);
    } finally {
      await hot.drop();
    }
  } finally {
    await server.stop();
  }

  const plain = await startServerProcess();
  try {
    const rounds = ctx.quick ? 2 : 4;
    const ms = ctx.quick ? 2_000 : 3_000;
    const o = await measureWatchOverhead(plain.url, rounds, ms);
    const unwatched = medianRate(o.unwatched);
    const watched = medianRate(o.watched);
    const note = `64 callers on one LockClient, lock then tryUnlock, ${rounds} alternating rounds of ${ms / 1000} s per side (unwatched ${o.unwatched.map(Math.round).join(", ")}; watched ${o.watched.map(Math.round).join(", ")}); ${o.eventsFollowed} lock events logged in the watched namespace`;
    figures.push(
      { name: "lock_events_pairs_per_s_unwatched_c64", value: round(unwatched, 0), unit: "pairs/s", ...base, note },
      { name: "lock_events_pairs_per_s_all_watched_c64", value: round(watched, 0), unit: "pairs/s", ...base, note },
      { name: "lock_events_overhead_all_watched_c64", value: round(1 - watched / unwatched, 3), unit: "ratio", ...base, note: "1 − watched / unwatched, medians of the same run" },
    );
    ctx.progress(`lock events at c64: unwatched ${Math.round(unwatched)}, all watched ${Math.round(watched)} pairs/s (overhead ${round(1 - watched / unwatched, 3)})`);
  } finally {
    await plain.stop();
  }
  return figures;
}
