import type { Violations } from "../violations.js";

/** One term's serve interval as its server logged it (wall-clock ms of its first and last operation). */
export interface ServeInterval {
  readonly server: number;
  readonly shard: number;
  readonly epoch: number;
  readonly from: number;
  readonly to: number;
}

/**
 * Fold `serve interval` log lines (test mode: one per led shard every renewal round and when a term
 * ends, each covering the term so far) into one interval per (shard, epoch).
 */
export function serveIntervals(servers: readonly (readonly Record<string, unknown>[])[]): ServeInterval[] {
  const terms = new Map<string, ServeInterval>();
  servers.forEach((lines, server) => {
    for (const line of lines) {
      if (line.msg !== "serve interval") continue;
      const shard = line.shard as number;
      const epoch = line.epoch as number;
      const key = `${shard}/${epoch}`;
      const seen = terms.get(key);
      terms.set(key, {
        server,
        shard,
        epoch,
        from: Math.min(seen?.from ?? Infinity, line.from as number),
        to: Math.max(seen?.to ?? -Infinity, line.to as number),
      });
    }
  });
  return [...terms.values()];
}

/**
 * No two leaders of a shard served in overlapping time: per shard, in epoch order, every term's
 * first operation comes after the last operation of every earlier term. Returns the terms checked.
 */
export function checkServeIntervals(intervals: readonly ServeInterval[], violations: Violations): number {
  const byShard = new Map<number, ServeInterval[]>();
  for (const i of intervals) {
    let list = byShard.get(i.shard);
    if (list === undefined) byShard.set(i.shard, (list = []));
    list.push(i);
  }
  for (const [shard, list] of byShard) {
    list.sort((x, y) => x.epoch - y.epoch);
    let latest: ServeInterval | undefined;
    for (const term of list) {
      const before = latest;
      if (before !== undefined) {
        violations.expect(term.from > before.to, "one leader serving per shard", () =>
          `shard ${shard}: epoch ${term.epoch} (server ${term.server}) served from ${term.from.toFixed(1)}, before epoch ${before.epoch} (server ${before.server}) stopped at ${before.to.toFixed(1)} (${(before.to - term.from).toFixed(1)} ms overlap)`,
        );
      }
      if (before === undefined || term.to > before.to) latest = term;
    }
  }
  return intervals.length;
}
