import { HttpLockService } from "@leasehold/client";
import { quantile } from "./stats.js";
import { committers } from "./suites/client.js";

/** lock+tryUnlock throughput at 64 callers with nothing watched and with everything watched. */
export interface WatchOverhead {
  readonly unwatched: number[];
  readonly watched: number[];
  readonly eventsFollowed: number;
}

/**
 * Rounds alternate between two namespaces of one server: one nobody watches, one watched with
 * `""` (every descriptor, registered once: the run is shorter than the 60 s watch TTL), so every
 * grant and release appends an event to its log. What is measured is the lock path's cost of
 * appending; the log is read once at the end (how many events it holds), not followed during the
 * rounds, because a follower in this process would take CPU from the 64 callers it is compared
 * against (a read cache reads the events with its transaction starts, not with a poll per event).
 * Alternating rounds put load from elsewhere on both alike; each side's figure is the median.
 */
export async function measureWatchOverhead(url: string, rounds: number, ms: number): Promise<WatchOverhead> {
  const service = new HttpLockService({ baseUrl: url });
  let eventsFollowed = 0;
  try {
    await service.lockWatches("bench-watched", { prefixes: [""] });
    const first = await service.lockEvents("bench-watched", { since: null });
    await committers(url, 64, ms / 2, "bench-unwatched");
    await committers(url, 64, ms / 2, "bench-watched");
    const unwatched: number[] = [];
    const watched: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? (["bench-unwatched", "bench-watched"] as const) : (["bench-watched", "bench-unwatched"] as const);
      for (const ns of order) {
        const run = await committers(url, 64, ms, ns);
        (ns === "bench-watched" ? watched : unwatched).push(run.pairs / run.elapsed);
      }
    }
    // The log kept the last 10,000 events; its version counts every event since the watch began.
    const last = await service.lockEvents("bench-watched", { since: null });
    eventsFollowed = last.version - first.version;
    return { unwatched, watched, eventsFollowed };
  } finally {
    await service.close();
  }
}

/** Median of rates. */
export function medianRate(rates: readonly number[]): number {
  return quantile([...rates], 0.5);
}
