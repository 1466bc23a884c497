import type { UnlockMode } from "@leasehold/txn";
import { incrementOnce, txnBenchClient, type TxnBenchClient } from "./txn-bench-client.js";

/** Commit latencies and unlock calls of one unlock mode at one concurrency. */
export interface ModeSamples {
  readonly latenciesMs: number[];
  transactions: number;
  unlockCalls: number;
}

/** Both modes, measured side by side. */
export interface CommitLatencyResult {
  readonly sync: ModeSamples;
  readonly async: ModeSamples;
}

/** `concurrency` workers, each on a row of its own (no conflicts), `perWorker` transactions each. */
async function round(bench: TxnBenchClient, concurrency: number, perWorker: number, into: ModeSamples): Promise<void> {
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      for (let i = 0; i < perWorker; i++) {
        into.latenciesMs.push(await incrementOnce(bench.manager, `w${w}`));
        into.transactions++;
      }
    }),
  );
}

/**
 * Run transactions in both modes for about `ms` at a few concurrencies, so the JIT of this process
 * and of the server has compiled the whole commit path before anything is measured: a cold first
 * level otherwise pays for compilation in whichever mode happens to run first.
 */
export async function warmUp(baseUrl: string, ms: number): Promise<void> {
  const modes: readonly UnlockMode[] = ["sync", "async"];
  const end = performance.now() + ms;
  const clients = modes.map((m) => txnBenchClient(baseUrl, `bench-txn-warm-${m}`, m));
  try {
    while (performance.now() < end) {
      for (const bench of clients) {
        for (const c of [1, 8]) await round(bench, c, 20, { latenciesMs: [], transactions: 0, unlockCalls: 0 });
      }
    }
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}

/**
 * Commit latency in `sync` and `async` unlock mode at `concurrency`, interleaved: `rounds`
 * rounds, each running one mode then the other (the order alternates), so drift on a shared
 * machine hits both modes alike. Each mode has its own client and counted transport; unlock calls
 * are counted from after a warm-up to after `close()` has flushed the last batched unlock.
 */
export async function measureCommitLatency(baseUrl: string, concurrency: number, rounds: number, perWorker: number): Promise<CommitLatencyResult> {
  const modes: readonly UnlockMode[] = ["sync", "async"];
  const clients = Object.fromEntries(modes.map((m) => [m, txnBenchClient(baseUrl, `bench-txn-${m}-c${concurrency}`, m)])) as Record<UnlockMode, TxnBenchClient>;
  const result: CommitLatencyResult = {
    sync: { latenciesMs: [], transactions: 0, unlockCalls: 0 },
    async: { latenciesMs: [], transactions: 0, unlockCalls: 0 },
  };
  try {
    const warm: ModeSamples = { latenciesMs: [], transactions: 0, unlockCalls: 0 };
    for (const m of modes) await round(clients[m], concurrency, Math.max(5, Math.ceil(perWorker / 2)), warm);
    await new Promise((r) => setTimeout(r, 50)); // let the warm-up's batched unlocks land before counting
    for (const m of modes) clients[m].service.reset();
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? modes : [...modes].reverse();
      for (const m of order) await round(clients[m], concurrency, perWorker, result[m]);
    }
  } finally {
    for (const m of modes) {
      await clients[m].close();
      result[m].unlockCalls = clients[m].service.unlockCalls;
    }
  }
  return result;
}
