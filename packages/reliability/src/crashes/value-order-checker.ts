import type { Violations } from "../violations.js";

/** One number the server handed out: a fresh timestamp, or a fencing token of a granted descriptor. */
export interface IssuedValue {
  /** A timestamp (`freshTimestamp`) or a fencing token (a lock grant). */
  readonly kind: "timestamp" | "fencing";
  /** The number. */
  readonly value: number;
  /** For fencing tokens: the descriptor it fences. */
  readonly descriptor?: string | undefined;
  /** For fencing tokens: the leader id of the lease it came with (which server process granted it). */
  readonly leaderId?: string | undefined;
  /** Monotonic ms just before the call was made. */
  readonly sentAt: number;
  /** Monotonic ms when the answer was in the caller's hands. */
  readonly receivedAt: number;
}

/** What {@link checkValueOrder} compared. */
export interface ValueOrderSummary {
  /** Values checked. */
  readonly checked: number;
  /** Values obtained from a server process started after a kill, each checked against every earlier one. */
  readonly afterRestart: number;
}

interface Seen {
  readonly receivedAt: number;
  readonly value: number;
}

/** For values sorted by `receivedAt`: the prefix maxima, so "max of everything received before t" is a binary search. */
function prefixMaxima(sorted: readonly Seen[]): { times: number[]; max: number[] } {
  const times: number[] = [];
  const max: number[] = [];
  let m = -Infinity;
  for (const s of sorted) {
    m = Math.max(m, s.value);
    times.push(s.receivedAt);
    max.push(m);
  }
  return { times, max };
}

/** Largest value received strictly before `t`, or -Infinity. */
function maxBefore(p: { times: number[]; max: number[] }, t: number): number {
  let lo = 0;
  let hi = p.times.length; // first index with time >= t
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((p.times[mid] as number) < t) lo = mid + 1;
    else hi = mid;
  }
  return lo === 0 ? -Infinity : (p.max[lo - 1] as number);
}

/**
 * Check the protocol's ordering promises on a history of handed-out numbers, in real time (an
 * answer received before a call was sent was handed out before that call was served, whichever
 * server process served either):
 *
 * - `timestamp-order`: a timestamp exceeds every timestamp and fencing token received before its
 *   call was sent ("strictly greater than any timestamp or fencing token this namespace ever
 *   handed out, including before a restart");
 * - `fencing-order`: a fencing token exceeds every fencing token of the same descriptor received
 *   before its lock call was sent;
 * - `fencing-across-restarts`: per descriptor, every fencing token granted by a later server
 *   process (by the lease's leader id, in `leaders` start order) exceeds every token granted by an
 *   earlier one, even when the answers crossed the kill.
 *
 * `restartedAt` is when each restarted process was listening: values sent after the first one are
 * counted as `afterRestart`.
 */
export function checkValueOrder(
  values: readonly IssuedValue[],
  leaders: readonly string[],
  restartedAt: readonly number[],
  violations: Violations,
): ValueOrderSummary {
  const byReceipt = [...values].sort((a, b) => a.receivedAt - b.receivedAt);
  const all = prefixMaxima(byReceipt);
  const perDescriptor = new Map<string, IssuedValue[]>();
  for (const v of byReceipt) {
    if (v.kind !== "fencing") continue;
    const key = v.descriptor ?? "";
    let list = perDescriptor.get(key);
    if (list === undefined) perDescriptor.set(key, (list = []));
    list.push(v);
  }
  const fencingPrefix = new Map([...perDescriptor].map(([d, list]) => [d, prefixMaxima(list)] as const));

  for (const v of values) {
    if (v.kind === "timestamp") {
      const before = maxBefore(all, v.sentAt);
      violations.expect(v.value > before, "timestamp-order", () => `timestamp ${v.value} is not above ${before}, received before its call was sent`);
    } else {
      const prefix = fencingPrefix.get(v.descriptor ?? "");
      const before = prefix === undefined ? -Infinity : maxBefore(prefix, v.sentAt);
      violations.expect(
        v.value > before,
        "fencing-order",
        () => `fencing token ${v.value} on ${v.descriptor ?? ""} is not above ${before}, received before its lock call was sent`,
      );
    }
  }

  const rank = new Map(leaders.map((id, i) => [id, i] as const));
  for (const [descriptor, list] of perDescriptor) {
    const maxByLeader = new Map<number, number>();
    const minByLeader = new Map<number, number>();
    for (const v of list) {
      const r = rank.get(v.leaderId ?? "");
      if (r === undefined) {
        violations.add("fencing-across-restarts", `fencing token ${v.value} came with an unknown leader id`);
        continue;
      }
      maxByLeader.set(r, Math.max(maxByLeader.get(r) ?? -Infinity, v.value));
      minByLeader.set(r, Math.min(minByLeader.get(r) ?? Infinity, v.value));
    }
    let earlierMax = -Infinity;
    for (let r = 0; r < leaders.length; r++) {
      const min = minByLeader.get(r);
      if (min !== undefined) {
        violations.expect(
          min > earlierMax,
          "fencing-across-restarts",
          () => `on ${descriptor}, server process ${r} granted fencing token ${min}, not above ${earlierMax} granted by an earlier process`,
        );
      }
      earlierMax = Math.max(earlierMax, maxByLeader.get(r) ?? -Infinity);
    }
  }

  const firstRestart = restartedAt.length > 0 ? Math.min(...restartedAt) : Infinity;
  return { checked: values.length, afterRestart: values.filter((v) => v.sentAt >= firstRestart).length };
}
