import type { SectionResult } from "../report/index.js";
import { NO_LOCK_LOST_CHECK } from "./check-no-lock-lost.js";
import type { ControlHalf } from "./control-half.js";
import { STANDBY_CONTROL_CHECK, type StandbyControlName } from "./control-standby.js";
import type { StandbyScenarioResult } from "./standby-scenario.js";

/** One standby control as the test ran it: the removed half always, the intact half in soak mode. */
export interface StandbyControlRun {
  readonly name: StandbyControlName;
  readonly removed: ControlHalf;
  readonly intact?: ControlHalf | undefined;
}

const n = (x: number): string => x.toLocaleString("en-US");
const f0 = (x: number | undefined): string => (x === undefined || !Number.isFinite(x) ? "–" : x.toFixed(0));

/** What each control's scenario does, for the report (control-standby.ts has the details). */
const SCENARIOS: Record<StandbyControlName, string> = {
  "answer-before-ack":
    "L's PostgreSQL link cut and S SIGSTOPped; y asked of L (its entry stays in flight to S), then x by A; after 0.6 of a leader lease L SIGKILLed, S SIGCONTed, B asks for x; S takes over with its table (the row still says in sync)",
  "promote-any-replica":
    "S SIGSTOPped; y asked of L (in flight to S), then x by A, answered once L recorded `in_sync = false`; L SIGKILLed at once (a run where L's next round sent S a fresh snapshot first is run again), S SIGCONTed, B asks for x; S takes the shard",
};

function controlRows(c: StandbyControlRun): string[] {
  const halves = c.intact === undefined ? [c.removed] : [c.intact, c.removed];
  return halves.map((h) => {
    const f = h.facts;
    const fact = `A answered by L before it died: ${f.aAnsweredBeforeKill === 1 ? "yes" : "no"}; row in sync at the kill: ${f.inSyncAtKill === 1 ? "yes" : "no"}; S's table carried ${f.locksCarried === -1 ? "nothing (taken empty)" : `${f0(f.locksCarried)} lock(s)`}; B granted ${f0(Math.abs(f.bGrantAfterPromiseMs ?? Number.NaN))} ms ${(f.bGrantAfterPromiseMs ?? 0) < 0 ? "before" : "after"} A's promise ended`;
    const retried = (h.setupRetries ?? 0) === 0 ? "" : ` (set-up failed ${h.setupRetries} time(s) before, run again)`;
    return `| ${c.name} | ${h.ruleRemoved ? "B, removed" : "A, intact"} | **${n(h.violations.count(STANDBY_CONTROL_CHECK))}** | ${fact}${retried} |`;
  });
}

/** The standby faults' section of docs/reliability.md (issue 21). */
export function standbySection(main: StandbyScenarioResult, controls: readonly StandbyControlRun[], run: Pick<SectionResult, "mode" | "date" | "machine" | "seconds">): SectionResult {
  const o = main.options;
  const t = main.tally;
  const k = main.noLockLost;
  const violations =
    main.violations.total === 0 ? ["Violations found: **0**."] : [`Violations found: **${n(main.violations.total)}**:`, "", "```", main.violations.describe(), "```"];
  const markdown = [
    `Three CLI servers in cluster mode with a standby per shard (\`--replicas 1\`, the default; \`--leader-lease-ms ${o.leaderLeaseMs} --lease-ms ${o.leaseMs} --shards ${o.shards} --log-level debug\`),`,
    "each restarted in place with its own `--server-id`, over a PostgreSQL schema of their own, each through its own fault proxy.",
    "The workload of section 5 runs throughout (two clients per namespace with short exclusive holds on fenced counters,",
    "timestamps, transactions; one namespace on each shard, so every standby sees grants), plus **keepers**: two clients per",
    "namespace contending for one descriptor, each hold lasting 1.5–4 s (so it spans a fault and its failover), refreshed",
    "explicitly every 200 ms; every refresh answer goes in a ledger.",
    "",
    `**Cycles** (seed ${o.seed}, ${main.cycles.length} in this run, in order, each under the running workload; each waits until`,
    "the cluster is *whole* again: every member ready, every shard led with an in-sync standby):",
    "",
    "- **rolling-restart**: SIGTERM each server in turn, restart it with the same `--server-id`, wait until whole, next;",
    "- **kill-leader**: SIGKILL the leader of a shard whose row names an in-sync standby; restart it;",
    "- **kill-standby-then-leader**: SIGKILL a shard's standby, wait until its leader noticed (and, within two leader",
    "  leases, named the third server in sync), then SIGKILL the leader; restart both;",
    "- **stop-standby**: SIGSTOP a shard's standby for 1.5 leader leases, then SIGCONT.",
    "",
    "| cycle | what was done | takeover (ms) | cycle (ms) |",
    "| --- | --- | ---: | ---: |",
    ...main.cycles.map((c) => `| ${c.kind} | ${c.steps.join("; ")} | ${f0(c.takeoverMs)} | ${f0(c.elapsedMs)} |`),
    "",
    `**New check: ${NO_LOCK_LOST_CHECK}.** A failure lasts from the fault until the member is back *and* the cluster is`,
    "whole again (until then a second fault is a second failure). A kept hold whose whole life met at most one failure at",
    "a time may end by unlock or by lapse (its refreshes failed until its guarantee ran out, or a refresh sent after that",
    "found it gone), never by loss: a refresh sent while the guarantee still ran that answered without the token or under",
    "another `leaderId`. Holds that met two failures at once (kill-standby-then-leader after the second kill) are left out.",
    "The phases of the run by failed members:",
    "",
    "| failed | what | from (s) | to (s) |",
    "| ---: | --- | ---: | ---: |",
    ...main.phases.map((p) => `| ${p.failed} | ${p.what.join(", ") || "–"} | ${(p.from / 1000).toFixed(1)} | ${(p.to / 1000).toFixed(1)} |`),
    "",
    "| figure | value |",
    "| --- | ---: |",
    `| kept holds / checked (at most one failure) / left out (two at once) | ${n(k.holds)} / ${n(k.checked)} / ${n(k.excluded)} |`,
    `| checked holds kept through a failure (refreshed after it began) | ${n(k.keptThroughFailure)} |`,
    `| losses / of them left out | **${n(k.losses)}** / ${n(k.lossesExcluded)} |`,
    `| lapses | ${n(k.lapses)} |`,
    `| client calls (grants / lock timeouts / failed); keeper locks, refreshes | ${n(t.calls)} (${n(t.grants)} / ${n(t.lockTimeouts)} / ${n(t.errors)}); ${n(main.keeperCalls.locks)}, ${n(main.keeperCalls.refreshes)} |`,
    `| timestamp answers checked / leader terms checked | ${n(main.timestampAnswers)} / ${n(main.terms)} |`,
    "",
    ...violations,
    "",
    "**Negative controls.** Scripted scenarios on two servers (L leads the one shard, S is its in-sync standby;",
    "`--leader-lease-ms 1000 --lease-ms 20000`, so A's promise of 10 s spans the takeover). A holds x until a second",
    "after S took the shard over; the targeted check is the exclusion check, **" + STANDBY_CONTROL_CHECK + "**: with the",
    "rule removed (`LEASEHOLD_TEST_BREAK`) B is granted x inside A's hold and it must fire. The controls run in soak mode",
    "only (both halves); in quick mode the simulator removes both rules and finds each within its first seeds",
    "(`packages/sim/test/sim-regressions.test.ts`), and the main run above stands for the intact half.",
    "",
    ...controls.map((c) => `- **${c.name}**: ${SCENARIOS[c.name]}.`),
    "",
    "| control | half | violations of the exclusion check | what the scenario showed |",
    "| --- | --- | ---: | --- |",
    ...controls.flatMap(controlRows),
    "",
    "**The third control asked for, `move-row-before-gate`**, runs on a *balance* hand-over, in its own file",
    "(`packages/reliability/test/cluster/cluster-move-row-control.test.ts`): under SIGTERM no check could fire, because the",
    "server stops accepting connections before its cluster runtime stops (the old term receives next to nothing after the",
    "move), and a grant the old term decides after the standby promoted waits for an acknowledgement the promoted standby",
    "refuses. On a balance move the listener stays open: with the break the row moves to the taker first and the old term",
    "serves on (timestamps from its reserved block) until its gate closes by time, while the taker already serves; timestamp",
    "loops asking both servers directly make the **one leader serving per shard** check fire (about 0.5 s of overlap) and",
    "**timestamps real-time ordered** as well (a client that got the taker's timestamps then gets lower ones from the old",
    "term's reserved block); the intact half (gate closed first) stays silent.",
    "",
    "**Found by these cycles** (server behaviour, for issue 21's hand-over work):",
    "",
    "- Fixed since (each was a lock lost or a server down in these cycles): a standby dropped a replica it had just",
    "  received because its last read of the row still named the previous standby, so the balance hand-over that followed",
    "  found nothing to adopt and the shard was released (a replica is now dropped for \"another standby\" only on a row read",
    "  after its stream began); a balance move whose taker had just died (its member row still fresh) released the shard",
    "  without its table after 3 leader leases (it now keeps the shard and tries later); a promoted term granted a carried",
    "  waiter from a timer (a lapse ahead of it) before the namespace's timestamp bound was loaded, and the uncaught",
    "  refusal killed the server, which then never came back as a ready member (it now loads every carried namespace's",
    "  bound before it serves).",
    "- Also fixed: a shard that gets no grants noticed a restarted standby only at its next entry (the leader now compares",
    "  its standby's incarnation with the members its heartbeat hears); a server no longer balances by a member list heard",
    "  before it last took a shard (reported in the controls' two-server runs: a standby resumed from SIGSTOP released the",
    "  shard it had just taken over; not reproduced by this file's runs).",
  ].join("\n");
  const controlOps = controls.reduce((s, c) => s + c.removed.operations + (c.intact?.operations ?? 0), 0);
  return {
    id: "5b-cluster-standby",
    order: 5,
    title: "5b. Cluster standby faults (issue 21)",
    source: "packages/reliability/test/cluster/cluster-standby-faults.test.ts",
    ...run,
    operations: t.calls + main.keeperCalls.locks + main.keeperCalls.refreshes + controlOps,
    faults: main.cycles.reduce((s, c) => s + c.steps.filter((x) => x.startsWith("SIG")).length, 0) + controls.length * 3,
    badInputs: 0,
    violations: main.violations.total,
    markdown,
  };
}
