import { byDescriptor, ms, ViolationLog, type CheckResult } from "./check-result.js";
import type { History } from "./history-types.js";
import { leaseIntervals, type LeaseInterval } from "./lease-intervals.js";

function describe(later: LeaseInterval, earlier: LeaseInterval): string {
  const a = earlier.grant;
  const b = later.grant;
  return (
    `${b.descriptor}: ${b.mode} holder ${b.holder} (token ${b.fencingToken}) received its grant at ${ms(later.start)}, ` +
    `inside the lease of ${a.mode} holder ${a.holder} (token ${a.fencingToken}), guaranteed and held until ${ms(earlier.end)}`
  );
}

/**
 * Rule (a): no two holders' lease guarantees overlap in conflicting modes on one descriptor.
 *
 * Each grant's interval is `[grantReceivedAt, min(guaranteeEndsAt, releasedAt)]` (see
 * {@link leaseIntervals}); intervals that touch do not overlap, empty ones are skipped. Per
 * descriptor, intervals are swept in order of start while keeping the latest end of every
 * interval so far and of every exclusive one so far: an exclusive interval starting before the
 * first of these ends, or a shared one starting before the second ends, overlaps a conflicting
 * earlier interval. Every conflicting overlapping pair is found this way (the later-starting one
 * of the pair is flagged), in O(n log n). One violation is counted per flagged interval.
 */
export function checkLeaseOverlap(history: History): CheckResult {
  const log = new ViolationLog();
  let checked = 0;
  for (const intervals of byDescriptor(leaseIntervals(history).map((i) => ({ ...i, descriptor: i.grant.descriptor }))).values()) {
    const live = intervals.filter((i) => i.end > i.start).sort((x, y) => x.start - y.start);
    checked += live.length;
    let latestAny: LeaseInterval | undefined;
    let latestExclusive: LeaseInterval | undefined;
    for (const interval of live) {
      const rival = interval.grant.mode === "exclusive" ? latestAny : latestExclusive;
      if (rival !== undefined && interval.start < rival.end) log.add(() => describe(interval, rival));
      if (latestAny === undefined || interval.end > latestAny.end) latestAny = interval;
      if (interval.grant.mode === "exclusive" && (latestExclusive === undefined || interval.end > latestExclusive.end)) {
        latestExclusive = interval;
      }
    }
  }
  return log.result("(a) no conflicting lease guarantees overlap", checked);
}
