import type { Figure, Suite, SuiteContext } from "../figures.js";
import { openEtcdPeer } from "../peers/etcd-peer.js";
import { findEtcd, startEtcd } from "../peers/etcd-process.js";
import { leaseholdPeer } from "../peers/leasehold-peer.js";
import { PEER_NAMES, type PeerDriver, type PeerName, type PeerSkip } from "../peers/peer.js";
import { openPostgresPeers } from "../peers/postgres-peer.js";
import { openRedlockPeer } from "../peers/redlock-peer.js";
import { allKeys, busiestOverLeastBusy, runRound, type PeerWorkload } from "../peers/workloads.js";
import { startServerProcess, type ServerProcess } from "../server-process.js";
import { quantile, round } from "../stats.js";

/**
 * Round lengths and counts; rounds rotate over the peers so a noisy moment hits them alike. Every
 * peer warms up alone before its first timed round of each workload: 2 s in a full run, because
 * V8 takes more than a second of load to optimise the client's and server's hot paths (a round
 * after 1 s of warm-up measured half the rate of the next).
 */
function plan(quick: boolean) {
  return quick
    ? { warmMs: 200, throughput: { ms: 1_000, rounds: 1 }, latency: { ms: 1_000, rounds: 1 } }
    : { warmMs: 2_000, throughput: { ms: 1_500, rounds: 5 }, latency: { ms: 1_000, rounds: 3 } };
}

/** The largest value (a loop: spreading hundreds of thousands of waits into Math.max overflows the stack). */
const maxOf = (values: readonly number[]): number => values.reduce((a, b) => (b > a ? b : a), Number.NEGATIVE_INFINITY);

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Everything reachable, and why the rest is not. */
interface Peers {
  readonly drivers: PeerDriver[];
  readonly skips: PeerSkip[];
  close(): Promise<void>;
}

async function openPeers(ctx: SuiteContext): Promise<Peers> {
  const drivers: PeerDriver[] = [];
  const skips: PeerSkip[] = [];
  const closers: Array<() => Promise<void>> = [];
  let server: ServerProcess | undefined;
  try {
    server = await startServerProcess();
    closers.push(() => server!.stop());
    // async and sync batch their locks (the issue's leasehold); unbatched is the same calls as
    // async with one `lock` request per call, the baseline that shows what batching buys.
    drivers.push(leaseholdPeer("leasehold_async", server.url, "try", true), leaseholdPeer("leasehold_sync", server.url, "await", true));
    drivers.push(leaseholdPeer("leasehold_unbatched", server.url, "try", false));
  } catch (err) {
    for (const name of ["leasehold_async", "leasehold_sync", "leasehold_unbatched"] as const) skips.push({ name, reason: `server did not start: ${message(err)}` });
  }
  try {
    const redlock = await openRedlockPeer();
    closers.push(() => redlock.close());
    drivers.push(redlock.driver);
  } catch (err) {
    skips.push({ name: "redlock", reason: `Redis at 127.0.0.1:6379 unreachable: ${message(err)}` });
  }
  const etcdBinary = findEtcd();
  if (etcdBinary === undefined) {
    skips.push({ name: "etcd", reason: "no etcd binary on PATH (Debian: apt-get install etcd-server)" });
  } else {
    try {
      const etcd = await startEtcd(etcdBinary);
      closers.push(() => etcd.stop());
      const peer = openEtcdPeer(etcd.endpoint);
      closers.push(() => peer.close());
      ctx.progress(`etcd: ${etcd.version} started at ${etcd.endpoint} (${etcdBinary}, temp data dir)`);
      drivers.push(peer.driver);
    } catch (err) {
      skips.push({ name: "etcd", reason: `${etcdBinary} did not start: ${message(err)}` });
    }
  }
  try {
    const pg = await openPostgresPeers(64, allKeys());
    closers.push(() => pg.close());
    ctx.progress(`PostgreSQL: connected to database test as ${pg.user}`);
    drivers.push(pg.advisory);
    if (pg.row) drivers.push(pg.row);
    else skips.push({ name: "pg_row", reason: pg.rowSkip ?? "unknown" });
  } catch (err) {
    const reason = `PostgreSQL database test at 127.0.0.1:5432 unreachable: ${message(err)}`;
    skips.push({ name: "pg_advisory", reason }, { name: "pg_row", reason });
  }
  drivers.sort((a, b) => PEER_NAMES.indexOf(a.name) - PEER_NAMES.indexOf(b.name));
  return {
    drivers,
    skips,
    async close() {
      for (const close of closers.reverse()) await close().catch(() => undefined);
    },
  };
}

/**
 * Per peer: pairs per second of each round, timed pairs (µs; c1), and on the contended workload
 * each acquisition's wait (µs) and each round's busiest-over-least-busy caller ratio and extremes.
 */
type Measured = Map<PeerName, { rates: number[]; pairUs: number[]; waitUs: number[]; spread: number[]; fewest: number[]; most: number[] }>;

/** Run `workload` on every live peer, rounds rotating the order; a peer that fails is skipped. */
async function measure(ctx: SuiteContext, peers: Peers, workload: PeerWorkload): Promise<Measured> {
  const p = plan(ctx.quick);
  const { ms, rounds } = workload === "c1" ? p.latency : p.throughput;
  const out: Measured = new Map();
  const live = () => peers.drivers.filter((d) => !peers.skips.some((s) => s.name === d.name));
  const once = async (driver: PeerDriver, roundMs: number, timed: boolean) => {
    const session = await driver.session();
    const result = await runRound(session, workload, roundMs, { pairs: timed && workload === "c1", waits: timed && workload === "contended" });
    await session.end();
    return result;
  };
  for (const driver of live()) {
    try {
      await once(driver, p.warmMs, false);
    } catch (err) {
      peers.skips.push({ name: driver.name, reason: `failed during ${workload} warm-up: ${message(err)}` });
      ctx.progress(`${driver.name}: skipped (${message(err)})`);
    }
  }
  for (let r = 0; r < rounds; r++) {
    const order = live();
    for (let i = 0; i < order.length; i++) {
      const driver = order[(i + r) % order.length]!;
      try {
        const result = await once(driver, ms, true);
        const entry = out.get(driver.name) ?? { rates: [], pairUs: [], waitUs: [], spread: [], fewest: [], most: [] };
        entry.rates.push(result.pairs / result.seconds);
        for (const us of result.pairUs) entry.pairUs.push(us);
        for (const us of result.waitUs) entry.waitUs.push(us);
        entry.spread.push(busiestOverLeastBusy(result.perCaller));
        entry.fewest.push(Math.min(...result.perCaller));
        entry.most.push(Math.max(...result.perCaller));
        out.set(driver.name, entry);
      } catch (err) {
        peers.skips.push({ name: driver.name, reason: `failed during ${workload}: ${message(err)}` });
        out.delete(driver.name);
        ctx.progress(`${driver.name}: skipped (${message(err)})`);
      }
    }
  }
  for (const [name, m] of out) {
    const extra =
      workload === "c1"
        ? `, p50 ${round(quantile(m.pairUs, 0.5), 0)} µs, p99 ${round(quantile(m.pairUs, 0.99), 0)} µs`
        : workload === "contended"
          ? `, wait p50 ${round(quantile(m.waitUs, 0.5), 0)} µs, p99 ${round(quantile(m.waitUs, 0.99), 0)} µs, max ${round(maxOf(m.waitUs), 0)} µs; busiest/least busy caller ${m.spread.map((x) => round(x, 2)).join(" / ")}`
          : "";
    ctx.progress(`${workload} ${name}: ${m.rates.map((x) => Math.round(x)).join(" / ")} pairs/s${extra}`);
  }
  return out;
}

/**
 * Peer benchmarks of issue 6: leasehold (tryUnlock, awaited unlock, and "unbatched") against
 * redlock over ioredis, etcd's Lock/Unlock (issue 23; only where an etcd binary is installed),
 * PostgreSQL advisory locks and PostgreSQL row locks, on the same machine in
 * the same run: 64 callers on keys of their own, 64 callers on 8 shared keys, and one caller's
 * pair latency. Peers that cannot be reached are skipped with a progress line, never estimated.
 */
export const peersSuite: Suite = {
  name: "peers",
  description: "leasehold against redlock, etcd (when installed) and PostgreSQL advisory/row locks (only when named)",
  defaultOn: false,
  async run(ctx) {
    const peers = await openPeers(ctx);
    for (const s of peers.skips) ctx.progress(`${s.name}: skipped (${s.reason})`);
    const figures: Figure[] = [];
    const base = { command: ctx.command, quick: ctx.quick };
    const p = plan(ctx.quick);
    try {
      const c64 = await measure(ctx, peers, "c64");
      const contended = await measure(ctx, peers, "contended");
      const c1 = await measure(ctx, peers, "c1");
      const skipped = () => (peers.skips.length > 0 ? `; skipped this run: ${peers.skips.map((s) => `${s.name} (${s.reason})`).join(", ")}` : "");
      const throughput = (m: Measured, prefix: string, what: string) => {
        for (const [name, { rates }] of m) {
          const rounds = rates.map((x) => Math.round(x)).join(", ");
          figures.push({ name: `${prefix}_${name}`, value: round(quantile(rates, 0.5), 0), unit: "pairs/s", ...base, note: `${what}; median of ${rates.length} round(s) of ${p.throughput.ms / 1000} s (${rounds})${skipped()}` });
        }
      };
      throughput(c64, "peer_pairs_per_s_c64", "64 callers, 4 keys of their own each");
      throughput(contended, "peer_pairs_per_s_contended", "64 callers on 8 shared keys");
      for (const [name, m] of contended) {
        const waits = `64 callers on 8 shared keys; ${m.waitUs.length} acquisitions timed over ${m.rates.length} round(s) of ${p.throughput.ms / 1000} s${skipped()}`;
        const spread = `per round: ${m.spread.map((x, i) => `${round(x, 2)} (${m.most[i]}/${m.fewest[i]} pairs)`).join(", ")}; median of ${m.spread.length} round(s)${skipped()}`;
        figures.push(
          { name: `peer_wait_p50_us_contended_${name}`, value: round(quantile(m.waitUs, 0.5), 0), unit: "µs", ...base, note: waits },
          { name: `peer_wait_p99_us_contended_${name}`, value: round(quantile(m.waitUs, 0.99), 0), unit: "µs", ...base, note: waits },
          { name: `peer_wait_max_us_contended_${name}`, value: round(maxOf(m.waitUs), 0), unit: "µs", ...base, note: waits },
          { name: `peer_busiest_over_least_contended_${name}`, value: round(quantile(m.spread, 0.5), 2), unit: "ratio", ...base, note: spread },
        );
      }
      for (const [name, { pairUs }] of c1) {
        const note = `one caller, ${pairUs.length} pairs timed over ${p.latency.rounds} round(s) of ${p.latency.ms / 1000} s${skipped()}`;
        figures.push(
          { name: `peer_pair_p50_us_c1_${name}`, value: round(quantile(pairUs, 0.5), 0), unit: "µs", ...base, note },
          { name: `peer_pair_p99_us_c1_${name}`, value: round(quantile(pairUs, 0.99), 0), unit: "µs", ...base, note },
        );
      }
      // [figure name, leasehold peer, other peer]: each a ratio of two c64 figures of this run.
      const ratios = [
        ["peer_ratio_leasehold_over_redlock_c64", "leasehold_async", "redlock"],
        ["peer_ratio_leasehold_over_pg_advisory_c64", "leasehold_async", "pg_advisory"],
        ["peer_ratio_leasehold_sync_over_redlock_c64", "leasehold_sync", "redlock"],
      ] as const;
      const redlockP99 = figures.find((f) => f.name === "peer_wait_p99_us_contended_redlock");
      const leaseholdP99 = figures.find((f) => f.name === "peer_wait_p99_us_contended_leasehold_async");
      if (redlockP99 && leaseholdP99) {
        figures.push({
          name: "peer_ratio_wait_p99_leasehold_over_redlock_contended",
          value: round(leaseholdP99.value / redlockP99.value, 2),
          unit: "ratio",
          ...base,
          note: `peer_wait_p99_us_contended_leasehold_async (${leaseholdP99.value}) / peer_wait_p99_us_contended_redlock (${redlockP99.value}), same run`,
        });
      } else {
        ctx.progress(`peer_ratio_wait_p99_leasehold_over_redlock_contended: not reported (${!leaseholdP99 ? "leasehold_async" : "redlock"} not measured)`);
      }
      for (const [name, mine, peer] of ratios) {
        const leasehold = figures.find((f) => f.name === `peer_pairs_per_s_c64_${mine}`);
        const other = figures.find((f) => f.name === `peer_pairs_per_s_c64_${peer}`);
        if (!leasehold || !other) {
          ctx.progress(`${name}: not reported (${!leasehold ? mine : peer} not measured)`);
          continue;
        }
        figures.push({
          name,
          value: round(leasehold.value / other.value, 2),
          unit: "ratio",
          ...base,
          note: `peer_pairs_per_s_c64_${mine} (${leasehold.value}) / peer_pairs_per_s_c64_${peer} (${other.value}), same run`,
        });
      }
      return figures;
    } finally {
      await peers.close();
    }
  },
};
