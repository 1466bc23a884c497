import type { NamespaceSummary } from "@leasehold/protocol";
import { formatSample } from "./format-sample.js";
import type { Metric } from "./metric.js";

/**
 * How many namespaces get their own held/waiting series. Ten keeps a scrape's label cardinality
 * fixed and small (at most 20 series), which is what Prometheus needs, while naming the few
 * namespaces an operator looks at first; the totals cover the rest.
 */
export const DEFAULT_TOP_NAMESPACES = 10;

/**
 * The busiest `n` namespaces by held locks plus waiting requests (ties by name, so a scrape is
 * deterministic); idle namespaces never appear. O(namespaces log n)-ish: a sort of a copy that is
 * fine at scrape time for the namespaces a server has.
 */
export function busiestNamespaces(summaries: readonly NamespaceSummary[], n: number): NamespaceSummary[] {
  return summaries
    .filter((s) => s.heldLocks + s.waitingRequests > 0)
    .sort((a, b) => b.heldLocks + b.waitingRequests - (a.heldLocks + a.waitingRequests) || (a.namespace < b.namespace ? -1 : 1))
    .slice(0, n);
}

/**
 * The per-namespace and age metrics, all computed from one read of the namespace summaries per
 * scrape (the read is cached for the duration of one render so the four families agree).
 */
export function namespaceMetrics(read: () => readonly NamespaceSummary[], topN: number): Metric[] {
  let cached: readonly NamespaceSummary[] | null = null;
  const summaries = (): readonly NamespaceSummary[] => {
    if (cached === null) {
      cached = read();
      // One render reads it several times; the next scrape must read afresh.
      queueMicrotask(() => (cached = null));
    }
    return cached;
  };
  const perNamespace = (name: string, help: string, pick: (s: NamespaceSummary) => number): Metric => ({
    name,
    help,
    type: "gauge",
    samples: () => busiestNamespaces(summaries(), topN).map((s) => formatSample(name, { namespace: s.namespace }, pick(s))),
  });
  const oldest = (name: string, help: string, pick: (s: NamespaceSummary) => number | undefined): Metric => ({
    name,
    help,
    type: "gauge",
    samples: () => {
      let max = 0;
      for (const s of summaries()) max = Math.max(max, pick(s) ?? 0);
      return [formatSample(name, {}, max / 1000)];
    },
  });
  return [
    perNamespace("leasehold_namespace_held_locks", `Held locks of the ${topN} busiest namespaces (held + waiting); others are only in the totals.`, (s) => s.heldLocks),
    perNamespace("leasehold_namespace_waiting_requests", `Waiting lock requests of the ${topN} busiest namespaces (held + waiting).`, (s) => s.waitingRequests),
    oldest("leasehold_oldest_hold_seconds", "Age of the oldest live token (time since its grant), 0 when none; a growing value is a lock somebody never releases.", (s) => s.oldestHoldMs),
    oldest("leasehold_longest_wait_seconds", "How long the longest-waiting lock request has waited, 0 when none.", (s) => s.longestWaitMs),
  ];
}
