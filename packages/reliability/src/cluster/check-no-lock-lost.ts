import type { Violations } from "../violations.js";
import type { FailureLog } from "./failure-log.js";
import type { KeptHold } from "./lock-keepers.js";

/** The check's name, as violations and the report give it. */
export const NO_LOCK_LOST_CHECK = "no lock lost to a single failure";

/** What the check saw. */
export interface NoLockLostFigures {
  /** Holds examined (every kept hold). */
  readonly holds: number;
  /** Holds whose life met at most one failure at a time (the check applies to them). */
  readonly checked: number;
  /** Of those, holds granted before a failure began and still refreshed after it began (kept through it). */
  readonly keptThroughFailure: number;
  /** Holds that met two failures at once (left out: their loss is allowed). */
  readonly excluded: number;
  /** Losses, and of them the ones excluded. */
  readonly losses: number;
  readonly lossesExcluded: number;
  /** Holds that lapsed (their refreshes failed until the guarantee ran out: allowed). */
  readonly lapses: number;
}

/**
 * No lock lost to a single failure: from the keepers' ledger, a hold whose whole life (grant to
 * end) met at most one failed member at a time may end by unlock or lapse, never by a loss (a
 * refresh, sent while its guarantee still ran, that answered without the token or under another
 * `leaderId`). A hold that met two failures at once (a standby and then its leader killed) is left
 * out. The workload never revokes, so a revoke is no excuse here. `explain(key, from, to)` adds
 * what the servers logged about the key's shard between the last good refresh and the loss
 * (default: nothing).
 */
export function checkNoLockLost(
  holds: readonly KeptHold[],
  failures: FailureLog,
  violations: Violations,
  explain: (key: string, from: number, to: number) => string = () => "",
): NoLockLostFigures {
  let checked = 0;
  let keptThroughFailure = 0;
  let losses = 0;
  let lossesExcluded = 0;
  let lapses = 0;
  for (const h of holds) {
    const end = h.endedAt ?? h.lastRefreshedAt;
    const single = failures.maxFailedWithin(h.grantedAt, end) <= 1;
    if (h.end === "lapsed") lapses++;
    if (h.end === "lost") {
      losses++;
      if (!single) lossesExcluded++;
    }
    if (!single) continue;
    checked++;
    if (failures.failures.some((f) => f.from > h.grantedAt && f.from < h.lastRefreshedAt)) keptThroughFailure++;
    violations.expect(h.end !== "lost", NO_LOCK_LOST_CHECK, () => {
      const during = failures.failures.filter((f) => f.from <= end && (f.to === undefined || f.to > h.grantedAt)).map((f) => `member ${f.member} ${f.how}`);
      const why = explain(h.key, h.lastRefreshedAt, end);
      return `${h.key}: hold ${h.holder} granted at ${h.grantedAt.toFixed(0)} ms, last refreshed at ${h.lastRefreshedAt.toFixed(0)} ms, lost at ${end.toFixed(0)} ms (${h.detail ?? "?"}) with at most one failure at a time (${during.join(", ") || "none"})${why === "" ? "" : `; meanwhile ${why}`}`;
    });
  }
  return { holds: holds.length, checked, keptThroughFailure, excluded: holds.length - checked, losses, lossesExcluded, lapses };
}
