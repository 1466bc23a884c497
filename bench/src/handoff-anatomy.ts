/**
 * `pnpm bench:handoff [rounds] [ms]`: the anatomy of the contended hand-off (issue 23, "Contention
 * and fairness"). One lock server, one `LockClient` per round, the peers suite's contended workload
 * (64 callers on 8 shared keys, `lock` then `tryUnlock`, lock batching on), `rounds` rounds of `ms`
 * (defaults 6 and 1,000) after a 2 s warm-up. Each round prints what one cycle of the hand-off is
 * made of, a cycle being one `unlock` call of the unlocker (it keeps one in flight, DESIGN.md):
 *
 * - pairs per second, and tokens per `unlock` call (the keys handed over per cycle; at most 8 here);
 * - `lock-batch` requests per `unlock` call, from the server's `/metrics` (the callers' next locks);
 * - the cycle's length (the round's time over its `unlock` calls) and the `unlock` exchange's p50
 *   (from the client's `leasehold:client:unlock:flush` channel);
 * - CPU time per pair of this process (the client) and of the server (`/proc/<pid>/stat`).
 *
 * When the cycle is about the two processes' CPU per cycle added up, they take turns (one idle while
 * the other works) and only less CPU on either side shortens it. Counting system calls per cycle
 * needs `strace -c -f -p <pid>` on each process during a round (docs/benchmarks.md has figures).
 */
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { CLIENT_CHANNELS } from "@leasehold/protocol";
import { LockClient } from "@leasehold/client";
import { runRound } from "./peers/workloads.js";
import { fetchMetrics } from "./metrics-text.js";
import { cpuUsOf, selfCpuUs } from "./process-cpu.js";
import { startServerProcess } from "./server-process.js";
import { silentLogger } from "./silent-logger.js";
import { quantile } from "./stats.js";

const rounds = Number(process.argv[2] ?? 6);
const roundMs = Number(process.argv[3] ?? 1_000);

/** What one round measured. */
interface Anatomy {
  readonly pairsPerS: number;
  readonly tokensPerUnlock: number;
  readonly batchesPerUnlock: number;
  readonly cycleUs: number;
  readonly unlockExchangeUs: number;
  readonly clientCpuUsPerPair: number;
  readonly serverCpuUsPerPair: number;
}

/** The server's `200` count of `operation` so far, from its Prometheus text. */
async function requestsServed(url: string, operation: string): Promise<number> {
  return (await fetchMetrics(url)).value(`leasehold_requests_total{operation="${operation}",status="200"}`) ?? 0;
}

const server = await startServerProcess();
const flushMs: number[] = [];
const onFlush = (message: unknown): void => void flushMs.push((message as { durationMs: number }).durationMs);
subscribe(CLIENT_CHANNELS.unlockFlush, onFlush);

/** One round of the contended workload on a fresh client and namespace. */
async function round(n: number, ms: number): Promise<Anatomy> {
  const client = LockClient.http({ baseUrl: server.url, namespace: `handoff-${n}`, logger: silentLogger(), lockBatching: true });
  const session = {
    async pair(key: number): Promise<number> {
      const res = await client.lock([{ descriptor: `k${key}`, mode: "exclusive" }], { acquireTimeoutMs: 30_000 });
      if (res.status !== "acquired") throw new Error(`lock k${key} not granted within 30 s`);
      client.tryUnlock([res.token]);
      return 0;
    },
    end: () => client.close(),
  };
  flushMs.length = 0;
  const batches0 = await requestsServed(server.url, "lock-batch");
  const [client0, server0] = [selfCpuUs(), cpuUsOf(server.child.pid)];
  const result = await runRound(session, "contended", ms, { pairs: false, waits: false });
  const [client1, server1] = [selfCpuUs(), cpuUsOf(server.child.pid)];
  await session.end();
  const batches = (await requestsServed(server.url, "lock-batch")) - batches0;
  const stats = client.stats();
  if (stats.unlockFailures > 0) throw new Error(`${stats.unlockFailures} unlock calls failed`);
  return {
    pairsPerS: result.pairs / result.seconds,
    tokensPerUnlock: stats.tokensEnqueued / stats.unlockCalls,
    batchesPerUnlock: batches / stats.unlockCalls,
    cycleUs: (result.seconds * 1e6) / stats.unlockCalls,
    unlockExchangeUs: quantile(flushMs, 0.5) * 1_000,
    clientCpuUsPerPair: (client1 - client0) / result.pairs,
    serverCpuUsPerPair: (server1 - server0) / result.pairs,
  };
}

const f = (x: number, digits = 0): string => x.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
try {
  await round(0, 2_000);
  const all: Anatomy[] = [];
  console.log("| round | pairs/s | tokens per unlock | lock-batches per unlock | cycle µs | unlock exchange p50 µs | client CPU µs/pair | server CPU µs/pair |");
  console.log("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  const row = (label: string, a: Anatomy): string =>
    `| ${label} | ${f(a.pairsPerS)} | ${f(a.tokensPerUnlock, 2)} | ${f(a.batchesPerUnlock, 2)} | ${f(a.cycleUs)} | ${f(a.unlockExchangeUs)} | ${f(a.clientCpuUsPerPair, 1)} | ${f(a.serverCpuUsPerPair, 1)} |`;
  for (let r = 1; r <= rounds; r++) {
    const a = await round(r, roundMs);
    all.push(a);
    console.log(row(String(r), a));
  }
  const median = (key: keyof Anatomy): number => quantile(all.map((a) => a[key]), 0.5);
  console.log(
    row("median", {
      pairsPerS: median("pairsPerS"),
      tokensPerUnlock: median("tokensPerUnlock"),
      batchesPerUnlock: median("batchesPerUnlock"),
      cycleUs: median("cycleUs"),
      unlockExchangeUs: median("unlockExchangeUs"),
      clientCpuUsPerPair: median("clientCpuUsPerPair"),
      serverCpuUsPerPair: median("serverCpuUsPerPair"),
    }),
  );
} finally {
  unsubscribe(CLIENT_CHANNELS.unlockFlush, onFlush);
  await server.stop();
}
