import type { SectionResult } from "../report/index.js";
import type { ClientKillResult } from "./client-kill-scenario.js";
import { percentile } from "./percentile.js";
import type { ServerRestartResult } from "./server-restart-scenario.js";
import type { Violation } from "../violations.js";
import type { WaiterFloodResult } from "./waiter-flood-scenario.js";

/** The three scenarios' results, plus what the test process itself saw. */
export interface CrashesResults {
  /** Server SIGKILL and restart mid-load. */
  readonly restart: ServerRestartResult;
  /** The same without `--data-dir`: its ordering violations are expected and not counted. */
  readonly control: ServerRestartResult;
  /** Client SIGKILL. */
  readonly clientKill: ClientKillResult;
  /** 10,000 waiters. */
  readonly flood: WaiterFloodResult;
  /** Unhandled rejections and uncaught exceptions seen by the test process (each a violation). */
  readonly processErrors: number;
}

const n = (x: number): string => x.toLocaleString("en-US");
const f1 = (x: number): string => x.toFixed(1);
const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

function violationLines(all: readonly Violation[]): string[] {
  if (all.length === 0) return ["Violations found: **0**."];
  const byCheck = new Map<string, number>();
  for (const v of all) byCheck.set(v.check, (byCheck.get(v.check) ?? 0) + 1);
  return [
    `Violations found: **${all.length}** (${[...byCheck].map(([c, k]) => `${c}: ${k}`).join(", ")}). First ones:`,
    "",
    ...all.slice(0, 10).map((v) => `- \`${v.check}\`: ${v.detail}`),
  ];
}

function restartMarkdown(r: ServerRestartResult): string[] {
  const o = r.options;
  const ops = r.operations;
  const outages = r.outages.map((x) => x.listeningAt - x.killedAt);
  const lost = Object.entries(r.lostByReason).map(([reason, k]) => `${reason} ${n(k)}`).join(", ") || "none";
  return [
    "### Server SIGKILL and restart mid-load",
    "",
    `The CLI server (\`--lease-ms ${o.leaseMs}\`, \`--data-dir\`) as a child process; ${o.clients} \`LockClient.http\` clients, each`,
    `running ${o.workersPerClient} loops on ${o.descriptors} descriptors: a fresh timestamp (15 %) or a lock (exclusive 60 %, shared 40 %,`,
    "waiting up to 1 s) held 0–20 ms (one in five: 200–1,200 ms, across refreshes) and released by `tryUnlock` or `unlock`",
    "(a grant orphaned by a kill: two times in five kept until reported lost, else released at once by `tryUnlock`). Even clients use the",
    "default retries (about 3 s); odd ones give up after about 150 ms, so their calls and their `tryUnlock`s' unlock calls",
    `fail during an outage. The server was SIGKILLed ${r.outages.length} times, each time restarted on the same port and data`,
    `directory after ${o.downMs[0]}–${o.downMs[1]} ms down (seed ${o.seed}).`,
    "",
    "| figure | value |",
    "| --- | ---: |",
    `| operations (lock / unlock / tryUnlock / timestamp) | ${n(ops.lock)} / ${n(ops.unlock)} / ${n(ops.tryUnlock)} / ${n(ops.timestamp)} |`,
    `| lock requests answered timeout | ${n(r.lockTimeouts)} |`,
    `| SIGKILLs and restarts | ${r.outages.length} |`,
    `| outage, kill to listening again (min / max) | ${f1(Math.min(...outages))} / ${f1(Math.max(...outages))} ms |`,
    `| operations that failed (all \`UNAVAILABLE\`, all overlapping an outage) | ${n(r.failedOperations)} |`,
    `| grants held across a kill, waited for on \`lostLocks\` | ${n(r.orphansChecked)} |`,
    `| slowest loss report after the kill (bound: validForMs ${o.leaseMs / 2} ms + 1,000 ms) | ${f1(r.slowestLossReportMs)} ms |`,
    `| \`lostLocks\` reports by reason | ${lost} |`,
    `| tokens of a live server reported lost (allowed, not a violation) | ${n(r.lostWhileServerLive)} |`,
    `| failed \`tryUnlock\` unlock calls / warnings logged | ${n(r.tryUnlockFailures)} / ${n(r.tryUnlockFailureLogs)} |`,
    `| timestamps and fencing tokens checked / obtained after a restart | ${n(r.valueOrder.checked)} / ${n(r.valueOrder.afterRestart)} |`,
    `| lease lapses on the last server process | ${n(r.finalLapses)} |`,
    "",
    "Checks (each failure is a violation): a grant held across a kill is reported on `lostLocks` (`leader-changed`,",
    "`not-refreshed` or `lease-expired`) within its lease plus 1 s of the kill (`lost-locks-reported`); every failed unlock call",
    "of `tryUnlock` is logged once with its token count and `tryUnlock` never throws (`tryUnlock-failures-logged`,",
    "`tryUnlock-never-throws`); no log line carries a token (`no-token-in-logs`); an operation fails only if it overlapped an",
    "outage, and only with `UNAVAILABLE` (`errors-only-during-outages`); a timestamp is above every timestamp and fencing",
    "token received before it was asked for, a fencing token above every earlier one of its descriptor, and per descriptor",
    "every token of a later server process above every token of an earlier one (`timestamp-order`, `fencing-order`,",
    "`fencing-across-restarts`); an `unlock` of a token still within its lease, on a server that lives, finds it held",
    "(`lease-honoured`); every operation settles within its wait plus 15 s, every loop ends and every `close()` resolves",
    "(`no-hang`); no unhandled rejection or uncaught exception in the test process and no client log line at `error`",
    "(`no-client-crash`); after the load, nothing is held or waiting (`all-released`); and the faults really exercised each",
    "path (`faults-exercised`: some",
    "`tryUnlock` failed, some grant was held across a kill, some values came after a restart).",
  ];
}

function controlMarkdown(r: ServerRestartResult): string[] {
  const fired = new Map<string, number>();
  for (const v of r.violations.list()) fired.set(v.check, (fired.get(v.check) ?? 0) + 1);
  const ordering = ["timestamp-order", "fencing-order", "fencing-across-restarts"].map((c) => `\`${c}\` ${n(fired.get(c) ?? 0)}`).join(", ");
  return [
    `Negative control: the same load (${r.options.clients} clients, ${r.outages.length} SIGKILL) against a server started`,
    "**without** `--data-dir`, whose numbers restart at 1 with each process. The ordering checks must fire, and did:",
    `${ordering}. These are the control's purpose and are not counted as violations of the section.`,
  ];
}

function clientKillMarkdown(r: ClientKillResult): string[] {
  const o = r.options;
  const lat = r.killToGrantMs;
  return [
    "### Client SIGKILL",
    "",
    `The CLI server with \`--lease-ms ${o.leaseMs}\` (leases promise ${o.leaseMs / 2} ms). ${r.kills} times, a child process`,
    `(\`src/crashes/lock-holder-child.ts\`) took ${o.descriptorsPerChild} exclusive locks with a \`LockClient\` and kept them alive`,
    "with its refresher; two waiters per descriptor queued behind it in the test process; after more than two leases the",
    "child was SIGKILLed and the time from the kill to the first waiter's grant measured.",
    "",
    "| figure | value |",
    "| --- | ---: |",
    `| client processes SIGKILLed | ${r.kills} |`,
    `| descriptors freed by the lease | ${lat.length} |`,
    `| held with waiters queued before the kill (min) | ${f1(Math.min(...r.heldBeforeKillMs))} ms |`,
    `| kill to grant: min / median / max | ${f1(Math.min(...lat))} / ${f1(percentile(lat, 50))} / ${f1(Math.max(...lat))} ms |`,
    `| bound: lease + reaping margin | ${o.leaseMs} + ${o.reapMarginMs} ms |`,
    "",
    "Checks: no waiter is granted while the holder lives, although it held for more than two leases (`no-grant-before-kill`);",
    "the holder never lost a lock while alive (`holder-kept-its-locks`); after the kill the first waiter is granted within",
    "the bound (`grant-within-lease`), the second only after the first released (`fifo`), both with fencing tokens above the",
    "dead holder's (`fencing-grows`); nothing is left held (`all-released`). Expected latency: the server reaps a lock",
    "`--lease-ms` after its last refresh and the holder refreshes every half `validForMs` (plus up to one 100 ms refresher",
    `tick), so about ${o.leaseMs * 0.75 - 100}–${o.leaseMs} ms after the kill, plus the reaping timer and delivery.`,
  ];
}

function floodMarkdown(r: WaiterFloodResult): string[] {
  const o = r.options;
  const rows = r.rounds.map(
    (x, i) =>
      `| ${i + 1} | ${f1(x.queueSeconds)} s | ${f1(x.healthP50Ms)} / ${f1(x.healthP99Ms)} / ${f1(x.healthMaxMs)} ms | ${mib(x.rssBefore)} → ${mib(x.rssWaiting)} (→ ${mib(x.rssAfter)} after) | ${n(Math.round(x.bytesPerWaiter))} B | ${f1(x.drainSeconds)} s | ${x.outOfOrder} | ${x.notGranted} |`,
  );
  return [
    "### 10,000 waiting lock requests",
    "",
    `Each round, on a fresh server: one holder (\`LockClient.http\` in the test process) holds a descriptor; a child process (\`src/crashes/waiter-flood-child.ts\`)`,
    `queues ${n(o.waiters)} exclusive lock requests on it, each on its own connection, as a one-entry \`lock-batch\` whose`,
    "200 head the server sends once the entry is queued: waiter i + 1 is sent only after waiter i's head arrived, so the",
    `queue order is known. With all of them waiting, the test process probes \`GET /v1/health\` ${n(o.healthSamples)} times on`,
    `a keep-alive connection of its own (${o.healthGapMs} ms apart) and reads the server's RSS from \`/proc/<pid>/status\``,
    "(the server runs with `--max-connections` raised above the waiters). Then the holder releases; the child unlocks",
    "each waiter as soon as it is granted.",
    "",
    "| round | queued in | health p50 / p99 / max | server RSS | RSS per waiter | drain | out of order | not granted |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...rows,
    "",
    `Checks: every waiter queued (\`all-waiters-queued\`); health p99 under ${o.healthP99BoundMs} ms while they wait`,
    `(\`health-p99\`); RSS growth under ${n(o.bytesPerWaiterBound)} bytes per waiter (\`memory-bounded\`; it includes each`,
    "waiter's connection, HTTP parser and request objects, not kernel socket buffers); every waiter granted and released",
    "(`all-waiters-served`), in queue order: grants on the descriptor are serial, so their fencing tokens and their arrival",
    "order must both follow the queue index (`fifo`).",
    "",
    `The lock service alone (\`createLockService\`, no HTTP, a child run with \`--expose-gc\`): V8 heap after a full GC grows by`,
    `${n(Math.round(r.engineBytesPerWaiter))} bytes per waiting request (${n(o.waiters)} queued, the caller's pending promise included).`,
  ];
}

function observations(results: CrashesResults): string[] {
  const { restart, clientKill, flood } = results;
  const perWaiter = Math.max(...flood.rounds.map((r) => r.bytesPerWaiter));
  const worstP99 = Math.max(...flood.rounds.map((r) => r.healthP99Ms));
  return [
    "Observations:",
    "",
    `- A client learns that the server died only through its refresher: grants held across a kill were reported lost at`,
    `  most ${f1(restart.slowestLossReportMs)} ms after the kill (\`leader-changed\` once a refresh reached the new process,`,
    `  \`lease-expired\` when refreshes kept failing until the lease ended), within the ${restart.options.leaseMs / 2} ms lease`,
    "  plus slack. Until then the client may still count the lock as held (`isHeld`), which is why fencing tokens",
    "  matter: the numbers did keep growing across every restart.",
    `- A killed client blocks its descriptors for at most about one lease: ${f1(Math.min(...clientKill.killToGrantMs))}–${f1(Math.max(...clientKill.killToGrantMs))} ms`,
    `  with \`--lease-ms ${clientKill.options.leaseMs}\` (the lease counts from the holder's last refresh, then the reaping timer fires`,
    "  and the grant travels to the waiter).",
    `- 10,000 waiters cost the server process about ${n(Math.round(perWaiter / 1024))} KiB of RSS each; the lock service alone`,
    `  (embedded, V8 heap after a full GC) needs about ${n(Math.round(flood.engineBytesPerWaiter))} bytes per waiting request, so`,
    "  nearly all of it is the waiter's own connection (socket, HTTP parser, request and response objects). Health kept a",
    `  p99 of ${f1(worstP99)} ms while they waited, and the drain served them strictly in queue order.`,
  ];
}

/** The section of docs/reliability.md for this suite's crash and 10,000-waiter tests. */
export function crashesSection(results: CrashesResults, meta: { mode: "quick" | "soak"; date: string; machine: string; seconds: number }): SectionResult {
  const { restart, control, clientKill, flood } = results;
  const controlOps = Object.values(control.operations).reduce((a, b) => a + b, 0);
  const all = [...restart.violations.list(), ...clientKill.violations.list(), ...flood.violations.list()];
  const processViolations: Violation[] = Array.from({ length: results.processErrors }, () => ({
    check: "no-client-crash",
    detail: "an unhandled rejection or uncaught exception in the test process",
  }));
  const ops = restart.operations;
  return {
    id: "2a-crashes",
    order: 2,
    title: "2. Faults: crashes and 10,000 waiters",
    source: "packages/reliability/test/crashes/crashes.test.ts",
    ...meta,
    operations: ops.lock + ops.unlock + ops.tryUnlock + ops.timestamp + controlOps + clientKill.operations + flood.operations,
    faults: restart.outages.length + control.outages.length + clientKill.kills,
    badInputs: 0,
    violations: all.length + processViolations.length,
    markdown: [
      "Real processes and real sockets: the CLI server is a child process killed with SIGKILL; lock holders and the 10,000",
      "waiters are child processes too. Faults counted: server and client SIGKILLs. Operations counted: every client",
      "operation (lock, unlock, tryUnlock, timestamp, health probe). In every scenario a server log line at `error` (a 500,",
      "a failed stop) is a violation (`no-server-errors`).",
      "",
      ...restartMarkdown(restart),
      "",
      ...controlMarkdown(results.control),
      "",
      ...clientKillMarkdown(clientKill),
      "",
      ...floodMarkdown(flood),
      "",
      "### Findings",
      "",
      ...violationLines([...all, ...processViolations]),
      "",
      ...observations(results),
      "",
    ].join("\n"),
  };
}
