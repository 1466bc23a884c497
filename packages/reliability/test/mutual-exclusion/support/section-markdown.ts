import { CHECKER_RULES_MARKDOWN, type HistoryCheckReport, type HistoryFigures } from "../../../src/history/index.js";
import type { WorkloadRun } from "./run-workload.js";
import type { ServerCounters } from "./server-metrics.js";
import type { WorkloadOptions } from "./workload-options.js";

/** One finished run with its verdicts, as the report needs it. */
export interface CheckedRun {
  /** What was run. */
  readonly options: WorkloadOptions;
  /** The history and the holders' counts. */
  readonly run: WorkloadRun;
  /** The checker's verdicts on the history. */
  readonly report: HistoryCheckReport;
  /** Counts drawn from the history. */
  readonly figures: HistoryFigures;
  /** `lease lapsed` warnings the server logged during the run. */
  readonly serverLapses: number;
  /** The server's counters over the run (`GET /metrics`, after minus before). */
  readonly server: ServerCounters;
  /** Rules (a) and (b) run again on deliberately broken copies of the history: they must fire. */
  readonly sensitivity: {
    /** The guarantee every grant was given in the stretched copy, from its request. */
    readonly stretchedMs: number;
    /** Violations of (a) in the copy with stretched guarantees. */
    readonly overlapsWhenStretched: number;
    /** Violations of (b) in the copy with each descriptor's tokens mirrored. */
    readonly misorderedWhenReversed: number;
  };
}

const n = (x: number): string => Math.round(x).toLocaleString("en-US");
const pct = (part: number, whole: number): string => (whole === 0 ? "0%" : `${((100 * part) / whole).toFixed(1)}%`);

function checkTable(report: HistoryCheckReport): string[] {
  const rows = ["| rule | items checked | violations |", "| --- | ---: | ---: |"];
  for (const r of report.all) rows.push(`| ${r.rule} | ${n(r.checked)} | ${n(r.violations)} |`);
  rows.push(`| **total** | | **${n(report.violations)}** |`);
  return rows;
}

function setup(main: CheckedRun): string[] {
  const validForMs = main.run.stats.validForMs.join(", ");
  const o = main.options;
  return [
    `**Setup.** \`node packages/server/dist/cli.js --lease-ms 500\` runs as a child process (its leases promise`,
    `\`validForMs\` = ${validForMs} ms). ${o.clients} holders on \`LockClient.http\` clients (half of them each with its own client,`,
    `\`lockBatching\` off; half four to a client with \`lockBatching\` on, so their locks meet in \`lock-batch\` calls; both ways of`,
    `sending a lock are judged), loop for ${n(o.durationMs / 1000)} s over`,
    `${o.descriptors} descriptors: each hold takes one descriptor at random, exclusive with chance ${o.exclusiveShare} (else shared), waiting`,
    `up to ${n(o.acquireTimeoutMs)} ms. An exclusive holder increments its descriptor's counter (read \`v\`, write \`v + 1\`); a shared`,
    `holder reads it twice; both check their guarantee before each operation and release with \`unlock\` or`,
    `\`tryUnlock\` (half each). Every ${o.pauseEvery}th hold (alternately exclusive and shared) is a **simulated GC pause**: it is taken on a second`,
    `client of the same holder whose refresher never wakes, does its first operation, sleeps ${n(o.pauseMs[0])}–${n(o.pauseMs[1])} ms`,
    `(well past the 500 ms lease, so the server lets the lock lapse and grants it to the next waiter), then does its`,
    `second operation with its old fencing token without checking anything, as a process resuming from a pause would.`,
    "",
    "**The fenced resource** (`packages/reliability/src/fenced-resource/fenced-counter.ts`), one per descriptor in",
    "the test process, stands in for storage: every operation, read or write, carries the holder's fencing token;",
    "it keeps the highest token it has seen and refuses any operation with a lower one, and records every",
    "operation, accepted or refused, with its time, holder, token and mode.",
    "",
  ];
}

function figures(main: CheckedRun): string[] {
  const f = main.figures;
  const s = main.run.stats;
  const counters = Object.entries(f.counters)
    .map(([d, c]) => `${d} ${n(c.final)}/${n(c.acknowledged)}`)
    .join(", ");
  const lost = Object.entries(s.lostLocks).map(([reason, count]) => `${reason} ${n(count)}`).join(", ") || "none";
  return [
    "| figure | count |",
    "| --- | ---: |",
    `| lock calls (timeouts) | ${n(s.lockCalls)} (${n(s.timeouts)}) |`,
    `| grants: exclusive / shared | ${n(f.grants)}: ${n(f.exclusiveGrants)} / ${n(f.sharedGrants)} |`,
    `| releases recorded | ${n(f.releases)} (unlock ${n(s.releases.unlock)}, tryUnlock ${n(s.releases.tryUnlock)}) |`,
    `| grants that waited more than half of \`validForMs\`, renewed with \`refresh\` (renewal refused) | ${n(s.renewedAfterWait)} (${n(s.renewalsRefused)}) |`,
    `| grants the client did not count as held on arrival (\`isHeld\` false) | ${n(s.notHeldOnArrival)} |`,
    `| simulated GC pauses: exclusive / shared (total paused) | ${n(s.pauses.exclusive + s.pauses.shared)}: ${n(s.pauses.exclusive)} / ${n(s.pauses.shared)} (${n(s.pausedMs / 1000)} s) |`,
    `| leases the server let lapse (its \`lease lapsed\` log lines) | ${n(main.serverLapses)} |`,
    `| operations after a pause: refused / accepted | ${n(s.afterPause.refused)} / ${n(s.afterPause.accepted)} |`,
    `| grants with a live guarantee (compared by rule (a)) | ${n(f.liveGuarantees)} |`,
    `| closest approach: a guarantee's end to the start of the next conflicting one | ${f.closestConflictGapMs.toFixed(3)} ms |`,
    `| resource operations: reads / writes | ${n(f.operations)}: ${n(f.reads)} / ${n(f.writes)} |`,
    `| operations refused / stale on arrival (a higher token already seen) | ${n(f.refused)} / ${n(f.stale)} |`,
    `| refused while the holder's guarantee still ran: exclusive / shared | ${n(f.refusedInsideGuarantee.exclusive)} / ${n(f.refusedInsideGuarantee.shared)} |`,
    `| increments acknowledged / lost | ${n(f.acknowledgedIncrements)} / ${n(f.lostIncrements)} |`,
    `| final counter / acknowledged increments, per descriptor | ${counters} |`,
    `| the server's count over the run: grants / lapses / abandoned waits | ${n(main.server.grants)} / ${n(main.server.lapses)} / ${n(main.server.abandoned)} |`,
    `| the server's count of requests: lock / lock-batch / refresh / unlock | ${["lock", "lock-batch", "refresh", "unlock"].map((op) => n(main.server.requests[op] ?? 0)).join(" / ")} |`,
    `| tokens reported on \`lostLocks\` | ${lost} |`,
    `| errors thrown by lock, refresh or unlock; failed background unlocks | ${n(s.errors.length)}; ${n(s.unlockFailures)} |`,
    "",
  ];
}

function control(ctl: CheckedRun): string[] {
  const f = ctl.figures;
  const s = ctl.run.stats;
  const final = Object.values(f.counters).reduce((sum, c) => sum + c.final, 0);
  return [
    `**Negative control.** The same workload for ${n(ctl.options.durationMs / 1000)} s against an unfenced counter`,
    "(`unfenced-counter.ts`: it records tokens but accepts everything, like a store that trusts the lock alone).",
    `${n(s.pauses.exclusive)} exclusive holders paused between their read and their write; ${n(f.stale)} stale operations were accepted; the counters ended at`,
    `${n(final)} after ${n(f.acknowledgedIncrements)} acknowledged increments: **${n(f.lostIncrements)} increments lost**`,
    `(${pct(f.lostIncrements, f.acknowledgedIncrements)}), so the pauses really did overlap newer holders. On this history the checker`,
    `finds ${n(ctl.report.staleRefused.violations)} violations of (c) (stale operations accepted) and ${n(ctl.report.noLostWrites.violations)} of (d), while (a) and (b), which`,
    `judge the server, find ${n(ctl.report.leaseOverlap.violations + ctl.report.fencingOrder.violations)}. The test fails unless increments are lost and (c) and (d) both fire.`,
    "",
  ];
}

function findings(main: CheckedRun): string[] {
  const f = main.figures;
  const s = main.run.stats;
  const out = [
    "**Findings.**",
    "",
    main.report.violations === 0
      ? "- No violation of (a)–(d) or of well-formedness: no conflicting guarantees overlapped, fencing tokens rose in grant order, every stale operation was refused and no acknowledged increment was lost."
      : `- ${n(main.report.violations)} violations (the test failed): ${main.report.all.filter((r) => r.violations > 0).map((r) => `${r.rule}: ${r.examples[0] ?? ""}`).join("; ")}`,
    `- Fencing did its job: ${n(s.afterPause.refused)} of ${n(s.afterPause.refused + s.afterPause.accepted)} operations made after a pause were refused${s.afterPause.accepted > 0 ? "; the others reached a resource no newer holder had used yet, which is harmless" : ""}.`,
  ];
  if (f.refusedInsideGuarantee.shared > 0) {
    out.push(
      `- ${n(f.refusedInsideGuarantee.shared)} reads of shared holders were refused while their lease still ran: shared holders get distinct tokens, so once a reader granted later has read, an earlier concurrent reader's token is "lower than the highest seen". That is the rule the issue asks for; a store that must serve concurrent readers would refuse a read only when its token is below the highest token an exclusive holder has used.`,
    );
  }
  if (s.notHeldOnArrival > 0) {
    out.push(
      `- ${n(s.notHeldOnArrival)} grants (${pct(s.notHeldOnArrival, f.grants)}) arrived after the lease the client counts from before the request had run out, because they had waited in the queue longer than \`validForMs\`; \`LockClient.isHeld\` answered false for them, and the client's refresher drops such a token as \`lease-expired\` at its next tick without ever refreshing it, though the server has just granted it. Holders here renew such grants themselves with \`refresh()\` (${n(s.renewedAfterWait)} renewals, ${n(s.renewalsRefused)} refused); a plain \`lock\` caller who holds on for more than a tick loses the lock. Reported for a fix in the client (renew at once when a grant arrives with its lease mostly spent).`,
    );
  }
  out.push("");
  return out;
}

/** The section's Markdown body: setup, the checker's rules, figures, verdicts, the control, findings. */
export function sectionMarkdown(main: CheckedRun, ctl: CheckedRun): string {
  const f = main.figures;
  return [
    ...setup(main),
    "**What was checked.**",
    "",
    CHECKER_RULES_MARKDOWN.trimEnd(),
    "",
    `**Fenced run** (${n(main.run.elapsedMs / 1000)} s): ${n(f.grants + f.releases + f.operations)} operations (grants, releases and resource operations) and ${n(main.run.stats.pauses.exclusive + main.run.stats.pauses.shared)} pauses.`,
    "",
    ...figures(main),
    ...checkTable(main.report),
    "",
    `The same history, deliberately broken, shows that (a) and (b) can fail on real data: with every guarantee stretched to`,
    `${n(main.sensitivity.stretchedMs)} ms from its request (longer than the server keeps an unrefreshed lock), (a) finds ${n(main.sensitivity.overlapsWhenStretched)} overlaps;`,
    `with each descriptor's fencing tokens mirrored, (b) finds ${n(main.sensitivity.misorderedWhenReversed)} grants out of order. The test requires both to be non-zero.`,
    "",
    ...control(ctl),
    ...findings(main),
    "The operations and faults counted in the summary table add both runs; its violations are the fenced run's (the control's are expected, and shown above).",
  ].join("\n");
}
