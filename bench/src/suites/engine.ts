import { LockEngine } from "@leasehold/server";
import type { LockResponse, LeaseholdError, WaitForLocksResponse } from "@leasehold/protocol";
import type { Figure, Suite } from "../figures.js";
import { nowMs, quantile, round } from "../stats.js";

/** Pairs per second of exclusive lock+unlock on keys nobody else holds, best of several rounds. */
function uncontended(pairsPerRound: number, rounds: number): number {
  const engine = new LockEngine({ leaseMs: 10_000 });
  const keys = Array.from({ length: 1024 }, (_, i) => `row-${i}`);
  const rates: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const start = nowMs();
    for (let i = 0; i < pairsPerRound; i++) {
      // A fresh request object per call, as a parsed HTTP body would be.
      const res = engine.lock("bench", { locks: [{ descriptor: keys[i & 1023]!, mode: "exclusive" }] });
      if (res.status !== "acquired") throw new Error("uncontended lock was not granted");
      engine.unlock("bench", { tokens: [res.token] });
    }
    rates.push(pairsPerRound / ((nowMs() - start) / 1000));
  }
  return quantile(rates, 0.5);
}

/**
 * 64 requesters cycling on 8 exclusive descriptors (8 per descriptor): almost every request queues
 * and is granted by the previous holder's unlock, in FIFO order.
 */
function contended(totalPairs: number): number {
  const ready: { requester: number; token: string }[] = [];
  const owner = new Map<unknown, number>();
  const engine = new LockEngine({
    leaseMs: 10_000,
    onSettled: (pending, outcome: LockResponse | WaitForLocksResponse | LeaseholdError) => {
      if (!("status" in outcome) || outcome.status !== "acquired") throw new Error("contended lock did not succeed");
      ready.push({ requester: owner.get(pending)!, token: outcome.token });
      owner.delete(pending);
    },
  });
  const request = (requester: number): void => {
    const res = engine.lock("bench", {
      locks: [{ descriptor: `hot-${requester & 7}`, mode: "exclusive" }],
      acquireTimeoutMs: 60_000,
    });
    if (res.status === "acquired") ready.push({ requester, token: res.token });
    else if (res.status === "waiting") owner.set(res, requester);
    else throw new Error("contended lock timed out");
  };
  for (let i = 0; i < 64; i++) request(i);
  let pairs = 0;
  const start = nowMs();
  while (pairs < totalPairs) {
    const next = ready.pop();
    if (!next) throw new Error("no requester holds a lock: the engine lost a grant");
    engine.unlock("bench", { tokens: [next.token] });
    pairs++;
    request(next.requester);
  }
  return totalPairs / ((nowMs() - start) / 1000);
}

/**
 * Microseconds per shared release of a descriptor that `watchers` as-many-as-possible exclusive
 * claims are waiting for: the descriptor stays held shared, so no release can grant any of them,
 * and the release must not pay for them (issue 13 measured 8.5 µs with 10 and 112.6 µs with
 * 10,000 when every release scanned every watcher). Median of rounds of lock+unlock pairs, each
 * pair's lock costing the same whatever the watchers.
 */
function releaseWithWatchers(watchers: number, pairsPerRound: number, rounds: number): number {
  const engine = new LockEngine({ leaseMs: 10_000, clock: () => 0 });
  const keep = engine.lock("bench", { locks: [{ descriptor: "watched", mode: "shared" }] });
  if (keep.status !== "acquired") throw new Error("the first shared lock was not granted");
  for (let i = 0; i < watchers; i++) {
    const claim = engine.lock("bench", {
      locks: [{ descriptor: "watched", mode: "exclusive" }],
      behavior: "as-many-as-possible",
      acquireTimeoutMs: 60_000,
    });
    if (claim.status !== "waiting") throw new Error("a watcher was answered at once");
  }
  const perPair: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const start = nowMs();
    for (let i = 0; i < pairsPerRound; i++) {
      const res = engine.lock("bench", { locks: [{ descriptor: "watched", mode: "shared" }] });
      if (res.status !== "acquired") throw new Error("shared lock was not granted");
      engine.unlock("bench", { tokens: [res.token] });
    }
    perPair.push(((nowMs() - start) * 1000) / pairsPerRound);
  }
  if (engine.metrics().waitingRequests !== watchers) throw new Error("a watcher stopped waiting");
  return quantile(perPair, 0.5);
}

/** Engine throughput in process: uncontended and contended lock+unlock pairs per second. */
export const engineSuite: Suite = {
  name: "engine",
  description: "in-process lock engine throughput, uncontended and 64-on-8 contended",
  async run(ctx) {
    const pairs = ctx.quick ? 300_000 : 1_000_000;
    uncontended(100_000, 2); // warm-up: let the JIT settle
    const un = uncontended(pairs, ctx.quick ? 3 : 7);
    ctx.progress(`engine uncontended: ${Math.round(un)} pairs/s`);
    contended(50_000);
    const co = contended(ctx.quick ? 200_000 : 1_000_000);
    ctx.progress(`engine contended: ${Math.round(co)} pairs/s`);
    releaseWithWatchers(10, 20_000, 1); // warm-up
    const fewWatchers = releaseWithWatchers(10, ctx.quick ? 50_000 : 200_000, 5);
    const manyWatchers = releaseWithWatchers(10_000, ctx.quick ? 50_000 : 200_000, 5);
    ctx.progress(`engine shared lock+release with 10 / 10,000 watchers: ${round(fewWatchers, 3)} / ${round(manyWatchers, 3)} us`);
    const figures: Figure[] = [
      { name: "engine_release_us_10_watchers", value: round(fewWatchers, 3), unit: "us", command: ctx.command, quick: ctx.quick, note: "shared lock+unlock pair on a descriptor 10 as-many-as-possible exclusive claims wait for, median of 5 rounds" },
      { name: "engine_release_us_10k_watchers", value: round(manyWatchers, 3), unit: "us", command: ctx.command, quick: ctx.quick, note: "the same with 10,000 waiting claims" },
      { name: "engine_release_ratio_10k_over_10_watchers", value: round(manyWatchers / fewWatchers, 2), unit: "ratio", command: ctx.command, quick: ctx.quick, note: "release cost with 10,000 watchers over with 10 (1 = independent of them)" },
      { name: "engine_pairs_per_s_uncontended", value: round(un, 0), unit: "pairs/s", command: ctx.command, quick: ctx.quick, note: `median of rounds of ${pairs.toLocaleString("en-US")} exclusive pairs over 1,024 keys` },
      { name: "engine_pairs_per_s_contended", value: round(co, 0), unit: "pairs/s", command: ctx.command, quick: ctx.quick, note: "64 requesters on 8 exclusive descriptors, every grant through the FIFO queue" },
    ];
    return figures;
  },
};
