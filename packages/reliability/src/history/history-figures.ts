import { byDescriptor } from "./check-result.js";
import type { GrantEvent, History, HoldMode } from "./history-types.js";
import { leaseIntervals, type LeaseInterval } from "./lease-intervals.js";

/** Counts describing a history, for the report (the checker's verdicts are in {@link HistoryCheckReport}). */
export interface HistoryFigures {
  /** Grants recorded. */
  readonly grants: number;
  /** Grants in exclusive mode. */
  readonly exclusiveGrants: number;
  /** Grants in shared mode. */
  readonly sharedGrants: number;
  /** Releases recorded. */
  readonly releases: number;
  /** Resource operations, accepted or refused. */
  readonly operations: number;
  /** Operations that were reads. */
  readonly reads: number;
  /** Operations that were writes (increments). */
  readonly writes: number;
  /** Operations the resource refused. */
  readonly refused: number;
  /** Operations that were stale when they arrived (a higher token had already reached the resource). */
  readonly stale: number;
  /** Refused operations whose holder's guarantee had not run out yet, by the holder's mode. */
  readonly refusedInsideGuarantee: Readonly<Record<HoldMode, number>>;
  /** Accepted writes (acknowledged increments), over all descriptors. */
  readonly acknowledgedIncrements: number;
  /** Per descriptor: acknowledged increments and the final counter. */
  readonly counters: Readonly<Record<string, { readonly acknowledged: number; readonly final: number }>>;
  /** Sum over descriptors of acknowledged increments minus final counter, where positive. */
  readonly lostIncrements: number;
  /** Grants whose lease guarantee was not empty (the ones rule (a) compares). */
  readonly liveGuarantees: number;
  /**
   * How close conflicting guarantees came: the smallest time, in ms, from the end of a guarantee
   * to the start of a later-starting conflicting one on the same descriptor (negative: they
   * overlapped). `Infinity` when no two conflicting guarantees exist.
   */
  readonly closestConflictGapMs: number;
}

/** The smallest start-minus-end between a guarantee and an earlier-starting conflicting one (the sweep of rule (a)). */
function closestConflictGap(history: History): { live: number; gap: number } {
  let live = 0;
  let gap = Infinity;
  for (const intervals of byDescriptor(leaseIntervals(history).map((i) => ({ ...i, descriptor: i.grant.descriptor }))).values()) {
    const sorted = intervals.filter((i) => i.end > i.start).sort((x, y) => x.start - y.start);
    live += sorted.length;
    let latestAny: LeaseInterval | undefined;
    let latestExclusive: LeaseInterval | undefined;
    for (const i of sorted) {
      const rival = i.grant.mode === "exclusive" ? latestAny : latestExclusive;
      if (rival !== undefined) gap = Math.min(gap, i.start - rival.end);
      if (latestAny === undefined || i.end > latestAny.end) latestAny = i;
      if (i.grant.mode === "exclusive" && (latestExclusive === undefined || i.end > latestExclusive.end)) latestExclusive = i;
    }
  }
  return { live, gap };
}

/** Count what a history holds: grants by mode, operations by kind and outcome, stale operations, counters. */
export function historyFigures(history: History): HistoryFigures {
  const grants = new Map<string, GrantEvent>(history.grants.map((g) => [g.holder, g]));
  let stale = 0;
  for (const ops of byDescriptor(history.operations).values()) {
    let highest = -Infinity;
    for (const op of [...ops].sort((x, y) => x.seq - y.seq)) {
      if (op.fencingToken < highest) stale++;
      highest = Math.max(highest, op.fencingToken);
    }
  }
  const refusedInsideGuarantee = { exclusive: 0, shared: 0 };
  const counters: Record<string, { acknowledged: number; final: number }> = {};
  for (const [d, final] of Object.entries(history.finalCounters)) counters[d] = { acknowledged: 0, final };
  for (const op of history.operations) {
    const grant = grants.get(op.holder);
    if (!op.accepted && grant !== undefined && op.at < grant.guaranteeEndsAt) refusedInsideGuarantee[op.mode]++;
    if (op.kind === "write" && op.accepted) {
      const c = (counters[op.descriptor] ??= { acknowledged: 0, final: 0 });
      c.acknowledged++;
    }
  }
  const values = Object.values(counters);
  const { live, gap } = closestConflictGap(history);
  const exclusiveGrants = history.grants.filter((g) => g.mode === "exclusive").length;
  return {
    grants: history.grants.length,
    exclusiveGrants,
    sharedGrants: history.grants.length - exclusiveGrants,
    releases: history.releases.length,
    operations: history.operations.length,
    reads: history.operations.filter((o) => o.kind === "read").length,
    writes: history.operations.filter((o) => o.kind === "write").length,
    refused: history.operations.filter((o) => !o.accepted).length,
    stale,
    refusedInsideGuarantee,
    acknowledgedIncrements: values.reduce((n, c) => n + c.acknowledged, 0),
    counters,
    lostIncrements: values.reduce((n, c) => n + Math.max(0, c.acknowledged - c.final), 0),
    liveGuarantees: live,
    closestConflictGapMs: gap,
  };
}
