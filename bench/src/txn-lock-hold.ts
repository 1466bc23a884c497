import { LockClient } from "@leasehold/client";
import { rowLock, type LockResponse } from "@leasehold/protocol";
import { InMemoryKeyValueStore, TRANSACTIONS_TABLE, type Cell, type UnlockMode } from "@leasehold/txn";
import { silentLogger } from "./silent-logger.js";
import { quantile } from "./stats.js";
import { BENCH_TABLE, incrementOnce, txnBenchClient } from "./txn-bench-client.js";

/**
 * A store that, when a transaction writes its versions (it then holds its commit locks), sends a
 * waiter's lock request on the same row and gives it time to queue; and that notes the moment the
 * transaction reached its commit point (its transactions-table entry is written).
 */
class ProbeStore extends InMemoryKeyValueStore {
  onVersions: (() => Promise<void>) | undefined;
  committedAt = 0;

  override async put(table: string, cell: Cell, timestamp: number, value: string | null): Promise<void> {
    await this.onVersions?.();
    return super.put(table, cell, timestamp, value);
  }

  override async putUnlessExists(table: string, cell: Cell, value: string): Promise<boolean> {
    const won = await super.putUnlessExists(table, cell, value);
    if (table === TRANSACTIONS_TABLE) this.committedAt = performance.now();
    return won;
  }
}

/** Median time from the commit point to a queued waiter being granted the row, per mode. */
export interface LockHoldResult {
  readonly syncMs: number;
  readonly asyncMs: number;
  readonly samples: number;
}

/**
 * For each sample, one committer transaction on a row while a waiter (another client) queues for
 * that row's lock: the waiter's grant marks when the server released the commit locks. Measured
 * from the commit point, which both modes reach after identical work, so the difference of the
 * medians is how much longer asynchronous unlock keeps the row locked. Modes alternate sample by
 * sample.
 */
export async function measureLockHold(baseUrl: string, samples: number, queueDelayMs = 4): Promise<LockHoldResult> {
  const waiter = LockClient.http({ baseUrl, namespace: "bench-hold", logger: silentLogger() });
  const stores = { sync: new ProbeStore(), async: new ProbeStore() };
  const committers = {
    sync: txnBenchClient(baseUrl, "bench-hold", "sync", stores.sync),
    async: txnBenchClient(baseUrl, "bench-hold", "async", stores.async),
  };
  const gaps: Record<UnlockMode, number[]> = { sync: [], async: [] };
  try {
    for (let i = 0; i < samples + 20; i++) {
      const mode: UnlockMode = i % 2 === 0 ? "sync" : "async";
      const store = stores[mode];
      const row = `hold-${mode}`;
      let grantedAt = 0;
      let waiting: Promise<LockResponse> | undefined;
      store.onVersions = async () => {
        waiting = waiter.lock([{ descriptor: rowLock(BENCH_TABLE, row), mode: "exclusive" }], { acquireTimeoutMs: 10_000 });
        void waiting.then(() => (grantedAt = performance.now()));
        await new Promise((r) => setTimeout(r, queueDelayMs));
      };
      await incrementOnce(committers[mode].manager, row);
      store.onVersions = undefined;
      const granted = await waiting;
      if (granted?.status !== "acquired") throw new Error("the waiter was not granted the row");
      await waiter.unlock([granted.token]);
      if (i >= 20) gaps[mode].push(grantedAt - store.committedAt); // the first 20 warm up
    }
  } finally {
    await Promise.all([waiter.close(), committers.sync.close(), committers.async.close()]);
  }
  return { syncMs: quantile(gaps.sync, 0.5), asyncMs: quantile(gaps.async, 0.5), samples: gaps.sync.length + gaps.async.length };
}
