import type { Figure, Suite } from "../figures.js";
import { startServerProcess } from "../server-process.js";
import { quantile, round } from "../stats.js";
import { measureCommitLatency, warmUp } from "../txn-commit-latency.js";
import { measureLockHold } from "../txn-lock-hold.js";
import { measureTimestamps } from "../txn-timestamps.js";
import { readCacheFigures } from "../read-cache-figures.js";

/**
 * Concurrency levels of the commit-latency comparison: interleaved rounds and transactions per
 * worker per round. Many short rounds rather than a few long ones, so a burst of load from
 * elsewhere on a shared machine lands on both modes alike.
 */
const LEVELS = [
  { c: 1, quick: { rounds: 16, perWorker: 50 }, full: { rounds: 40, perWorker: 100 } },
  { c: 8, quick: { rounds: 10, perWorker: 15 }, full: { rounds: 30, perWorker: 30 } },
  { c: 64, quick: { rounds: 6, perWorker: 5 }, full: { rounds: 20, perWorker: 8 } },
] as const;

/**
 * The commit path of `@leasehold/txn` against a lock server in a child process over loopback HTTP:
 * commit latency and unlock calls per transaction with synchronous against asynchronous unlock at
 * 1, 8 and 64 concurrent transactions, how much longer asynchronous unlock keeps commit locks
 * held, and fresh timestamps per second with autobatching.
 */
export const txnSuite: Suite = {
  name: "txn",
  description: "transactions: commit latency sync vs async unlock, unlock calls per txn, lock hold extension, timestamps/s, read cache over PostgreSQL, lock-event overhead",
  async run(ctx) {
    const server = await startServerProcess();
    const figures: Figure[] = [];
    const base = { command: ctx.command, quick: ctx.quick };
    try {
      await warmUp(server.url, ctx.quick ? 2_000 : 4_000);
      for (const level of LEVELS) {
        const { rounds, perWorker } = ctx.quick ? level.quick : level.full;
        const { sync, async } = await measureCommitLatency(server.url, level.c, rounds, perWorker);
        const p = (s: number[], q: number) => round(quantile(s, q), 3);
        const note = `${level.c} concurrent read-modify-write transactions on own rows, ${rounds} interleaved rounds of ${perWorker} per worker per mode (${sync.transactions} sync, ${async.transactions} async)`;
        const ratio = quantile(async.latenciesMs, 0.5) / quantile(sync.latenciesMs, 0.5);
        figures.push(
          { name: `commit_p50_ms_sync_c${level.c}`, value: p(sync.latenciesMs, 0.5), unit: "ms", ...base, note },
          { name: `commit_p50_ms_async_c${level.c}`, value: p(async.latenciesMs, 0.5), unit: "ms", ...base, note },
          { name: `commit_p99_ms_sync_c${level.c}`, value: p(sync.latenciesMs, 0.99), unit: "ms", ...base, note },
          { name: `commit_p99_ms_async_c${level.c}`, value: p(async.latenciesMs, 0.99), unit: "ms", ...base, note },
          { name: `commit_p50_ratio_async_over_sync_c${level.c}`, value: round(ratio, 3), unit: "ratio", ...base, note: "p50 async / p50 sync, same run" },
          { name: `unlock_calls_per_txn_sync_c${level.c}`, value: round(sync.unlockCalls / sync.transactions, 3), unit: "calls", ...base, note: `${sync.unlockCalls} unlock calls for ${sync.transactions} transactions` },
          { name: `unlock_calls_per_txn_async_c${level.c}`, value: round(async.unlockCalls / async.transactions, 3), unit: "calls", ...base, note: `${async.unlockCalls} unlock calls for ${async.transactions} transactions` },
        );
        ctx.progress(
          `commit c${level.c}: p50 sync ${p(sync.latenciesMs, 0.5)} ms, async ${p(async.latenciesMs, 0.5)} ms (ratio ${round(ratio, 3)}); p99 sync ${p(sync.latenciesMs, 0.99)} ms, async ${p(async.latenciesMs, 0.99)} ms; unlock calls/txn sync ${round(sync.unlockCalls / sync.transactions, 3)}, async ${round(async.unlockCalls / async.transactions, 3)}`,
        );
      }

      const hold = await measureLockHold(server.url, ctx.quick ? 200 : 1000);
      figures.push({
        name: "lock_hold_extension_ms_async_c1",
        value: round(hold.asyncMs - hold.syncMs, 3),
        unit: "ms",
        ...base,
        note: `median commit point → queued waiter granted: async ${round(hold.asyncMs, 3)} ms, sync ${round(hold.syncMs, 3)} ms; ${hold.samples} alternating samples`,
      });
      ctx.progress(`lock hold: async ${round(hold.asyncMs, 3)} ms, sync ${round(hold.syncMs, 3)} ms after the commit point (extension ${round(hold.asyncMs - hold.syncMs, 3)} ms)`);

      const ms = ctx.quick ? 1_000 : 3_000;
      for (const callers of [1, 32, 256]) {
        const ts = await measureTimestamps(server.url, callers, ms);
        figures.push({ name: `timestamps_per_s_c${callers}`, value: round(ts.perSecond, 0), unit: "timestamps/s", ...base, note: `${callers} concurrent freshTimestamp() callers on one client for ${ms / 1000} s` });
        ctx.progress(`timestamps c${callers}: ${Math.round(ts.perSecond)}/s`);
      }
    } finally {
      await server.stop();
    }
    // The read cache and lock events (issue 22), on server processes of their own.
    figures.push(...(await readCacheFigures(ctx)));
    return figures;
  },
};
