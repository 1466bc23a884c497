import { describeMachine, type SectionResult } from "../report/index.js";
import { DIRECTIONS, FAULT_KINDS } from "./fault-kinds.js";
import type { FaultProxyScenarioResult } from "./fault-proxy-scenario.js";

/** Every check of the section, in report order, with how it is computed. */
export const FAULT_PROXY_CHECKS: readonly (readonly [check: string, how: string])[] = [
  ["client-sets-request-id", "every lock call of a LockClient reached the server with a requestId, also the 20% where the caller gave none (the client must make one up, so its transport can retry)"],
  ["client-grant-matches-server", "every grant a client received is one the server made, for that requestId, with the same fencing tokens (looked up in the tap the moment the answer arrives)"],
  ["answer-consistency", "every answer that carries a token (the grant and each retry answered it) names the same requestId and fencing tokens"],
  ["double-grant", "no requestId was granted a second token before its first one ended"],
  ["retry-answer", "a lock call whose requestId's token was certainly held throughout the call (granted before it began, not released and within its lease until it was answered) was answered that token"],
  ["resend-within-lease", "raw loops: a granted request sent again at once and answered within the lease the client measured carries the same token and fencing token"],
  ["exclusive-overlap", "per descriptor, grants in fencing-token order (the engine's grant order): none came before the end of an earlier conflicting grant"],
  ["exclusive-snapshot", "each sample of the table: an exclusively held descriptor has exactly one holder, no descriptor has holders in two modes"],
  ["grant-to-nobody", "per namespace, every fencing number handed out (from `snapshot().nextTimestamp` before and after; one number per single-descriptor grant) belongs to a grant the server answered to a caller still waiting for it"],
  ["unreceived-refreshed", "a token no client received is never refreshed, so it ends at most one lease after its last answer"],
  ["holder-past-lease", "each sample: after making the engine catch up, no holder's latest recorded renewal is more than a lease old"],
  ["holder-after-unlock", "each sample: no holder is still there after the unlock that released it finished"],
  ["table-not-empty", "one lease (+500 ms for the reaping timer) after the clients and the proxy closed: every namespace's snapshot and the service metrics show nothing held and nothing waiting"],
  ["descriptor-stuck", "then an unproxied client takes every descriptor exclusively with no wait"],
  ["hung-operation", "every client call settled within its bound (computed from the client's retry and timeout settings)"],
  ["unexpected-error", "client calls failed only with UNAVAILABLE (service unreachable) or CANCELLED (only after their own abort)"],
  ["unexpected-answer", "raw calls answered only 200 (no 4xx, no 5xx) whenever an answer arrived"],
  ["tryUnlock-threw", "tryUnlock returned at once and never threw"],
  ["client-logged-error", "the clients never logged at error level (the client does that only for its own bugs)"],
  ["unhandled-rejection", "no unhandled promise rejection in the process during the run"],
];

function n(value: number): string {
  return value.toLocaleString("en-US");
}

function table(head: string, rows: readonly (readonly [string, number | string])[]): string[] {
  return [`| ${head} | count |`, "| --- | ---: |", ...rows.map(([k, v]) => `| ${k} | ${typeof v === "number" ? n(v) : v} |`)];
}

/** What the abandonment control (`runAbandonmentControl`) found against the real and a broken server. */
export interface NegativeControl {
  /** Abandoned waits staged against each server. */
  readonly rounds: number;
  /** Real server: waits it saw abandoned, and grants to nobody found (must be 0). */
  readonly realAbandoned: number;
  readonly realGhostGrants: number;
  /** Real server: every violation the control's checks found (must be 0; counted in the section's violations). */
  readonly realViolations: number;
  /** Broken server: waits it saw abandoned, and grants to nobody found (must be one per round). */
  readonly brokenAbandoned: number;
  readonly brokenGhostGrants: number;
}

/** The section's Markdown body: the proxy's faults, each check and how it is computed, counts and findings. */
export function renderFaultProxyMarkdown(r: FaultProxyScenarioResult, control?: NegativeControl): string {
  const c = r.config;
  const g = r.grants;
  const rate = (d: "toServer" | "toClient"): string =>
    FAULT_KINDS.map((k) => `${k} ${((c[d][k] ?? 0) * 100).toFixed(1)}%`).join(", ");
  const lines: string[] = [
    `A TCP proxy (\`node:net\`, 127.0.0.1) sits between the clients and a real \`startServer\` (lease ${c.leaseMs} ms,`,
    `\`validForMs\` ${c.leaseMs / 2} ms). Per chunk and per direction, from a seeded generator (seed ${c.seed}; each connection`,
    "direction draws from its own stream, so the k-th chunk of the n-th connection meets the same fate in a replay), it",
    `**delays** the chunk ${c.delayMs.min}–${c.delayMs.max} ms (later chunks wait behind it, order is kept), **drops** it and turns the`,
    `connection into a black hole (nothing forwarded either way, nothing closed; the server side is closed ${c.lingerMs.min}–${c.lingerMs.max} ms`,
    "after the client gives up), **truncates** it (a strict prefix is forwarded, then both sides get a FIN), or **resets**",
    `both sides with an RST (\`resetAndDestroy()\`). Rates per chunk: toward the server ${rate("toServer")}; toward the`,
    `clients ${rate("toClient")}. The proxy's own tests check that each fault does exactly that, in both directions.`,
    "",
    `Load for ${(c.loadMs / 1000).toFixed(0)} s: ${c.clients} \`LockClient.http\` clients × ${c.loopsPerClient} loops (half of the clients with lock`,
    `batching, so \`lock-batch\` and \`lock-cancel\` go over the wire too; default retries, \`requestTimeoutMs\` ${c.requestTimeoutMs})`,
    `lock one of ${c.descriptors} descriptors (75% exclusive) with a requestId (80% the test's own) and a wait of`,
    `0–${c.maxWaitMs} ms, 15% with an AbortSignal fired during the wait; hold; sometimes \`refresh\`; release by \`unlock\` or`,
    `\`tryUnlock\`. ${c.rawLoops} raw HTTP loops (\`node:http\`, keep-alive) do the same on another namespace with explicit`,
    "requestIds and their own retries: after an attempt gets no answer (fault, 15% abandoned on purpose mid-wait, or no",
    "answer in time) the same requestId is sent again (80%, up to 5 attempts); 30% of grants are sent once more at once.",
    "",
    "The true state is read from inside the server, never through the proxy: a tap wraps the lock service's public",
    "methods that the HTTP handler calls (`beginLock`, which every `lock-batch` entry goes through too, `unlock`, `refresh`,",
    "`cancelLock`) and records, on the server's",
    "own clock, every token granted (requestId, fencing tokens), every renewal and release, with bounds before and",
    `after each synchronous engine call; the table is sampled every ${c.sampleEveryMs} ms (${n(r.samples)} samples); the comparisons are`,
    "arranged so that a reported violation is certain (grant times are upper bounds, end times lower bounds).",
    "",
    `**Operations: ${n(r.ledger.operations)} client operations. Faults injected: ${n(r.proxy.total)} over ${n(r.proxy.connections)} connections.`,
    `Violations: ${n(r.violations.total)}.**`,
    "",
    "| direction | chunks | " + FAULT_KINDS.join(" | ") + " |",
    "| --- | ---: | " + FAULT_KINDS.map(() => "---:").join(" | ") + " |",
    ...DIRECTIONS.map((d) => `| ${d} | ${n(r.proxy.chunks[d])} | ${FAULT_KINDS.map((k) => n(r.proxy.faults[d][k])).join(" | ")} |`),
    "",
    "| check | how it is computed | violations |",
    "| --- | --- | ---: |",
    ...FAULT_PROXY_CHECKS.map(([check, how]) => `| \`${check}\` | ${how} | ${n(r.violations.count(check))} |`),
    "",
    ...table("operation", r.ledger.opsByKind()),
    "",
    ...table("outcome", r.ledger.outcomes()),
    "",
    ...table("server-side figure", [
      ["tokens granted", g.tokens],
      ["lock calls that waited (a batch entry counts as one)", g.waited],
      ["lock-cancel calls (aborts of batched waits)", r.serverCalls.cancelCalls],
      ["refresh calls / unlock calls", `${n(r.serverCalls.refreshCalls)} / ${n(r.serverCalls.unlockCalls)}`],
      ["waits abandoned by the server (connection closed)", g.abandoned],
      ["retries that arrived while their requestId's token was held (all answered that token)", g.retriesWhileHeld],
      ["grants no client received", g.unreceived],
      ["… of them released by the LockClient itself (a grant that crossed an abort: lock-cancel, or unlock of the probe's answer)", g.unreceivedReleased],
      ["… of them left to lapse (never refreshed)", g.unreceivedLapsed],
      ["fencing numbers accounted for, each one a grant answered to a caller", g.fencingNumbers],
      ["lease lapses (metrics)", r.serverMetrics.leaseLapsesTotal ?? 0],
      ["most holders seen in one sample", r.maxHoldersSeen],
    ]),
    "",
    ...table("client-side figure", [
      ...Object.entries(r.lostLocks).map(([reason, count]) => [`lost locks reported: ${reason}`, count] as const),
      ...Object.entries(r.clientWarnings).map(([msg, count]) => [`warning logged: ${msg}`, count] as const),
      ...r.ledger.slowest().map(([kind, ms]) => [`slowest ${kind} (ms)`, Math.round(ms)] as const),
      ["bound for a lock with the longest wait (ms)", r.lockBoundMs],
      ["bound for other calls (ms)", r.callBoundMs],
      ["table empty and every descriptor free, this long after the run (ms)", Math.round(r.drainMs)],
    ]),
    "",
  ];
  if (control !== undefined) {
    lines.push(
      `Control of \`grant-to-nobody\`: ${control.rounds} abandoned waits staged one at a time (a direct client holds a descriptor, a`,
      "raw request for it through the proxy is cut after 200 ms, the holder unlocks once the server has seen the",
      `disconnect). Real server: ${n(control.realAbandoned)} waits abandoned, ${n(control.realGhostGrants)} granted to nobody. Negative control, a server`,
      "broken on purpose whose engine leaves abandoned waits queued (the service still drops their callers):",
      `${n(control.brokenAbandoned)} abandoned, ${n(control.brokenGhostGrants)} granted to nobody and caught. The test requires 0 and one per wait.`,
      "",
    );
  }
  if (r.violations.total > 0) lines.push("Violations found:", "", "```", r.violations.describe(), "```", "");
  else lines.push("Findings: no violation of the checks above.", "");
  lines.push(
    "Found while building this section: a client bug. `LockClient` measured a grant's lease from before the lock",
    "request was sent, so a grant that had waited `validForMs` or more in the server's queue came back already",
    "lapsed by the client's own measure: `isHeld()` false, `withLock` aborting its work at once, and the refresher",
    "dropping the token as `lease-expired` on its next tick without ever renewing it, so the server let the lock",
    "lapse one lease later although nothing had failed. The first runs of this section showed it in their figures",
    "(one run: 49 of 240 grants already lapsed on return, 44 of them after a queue wait of `validForMs` or more;",
    "another: 37 `lease-expired` lost locks against 3 failed refreshes). Section 1 had found it too, and it was fixed there",
    "(commit ff51402: a grant that waited more than half its lease is renewed once on arrival).",
    "`test/fault-proxy/lease-after-wait.test.ts` keeps it fixed: over a slow link through the proxy (every chunk",
    "delayed, nothing failing), a `withLock` granted after a wait longer than its lease must be held on arrival,",
    `never reported lost and still held by the server two leases later. In this run ${n(r.ledger.lapsedOnReturn.length)} of the ${n(r.ledger.outcomeCount("lock", "acquired"))} grants came back`,
    `already lapsed by the client's measure (${n(r.lapsedAfterQueueWait)} of them after a queue wait of \`validForMs\` or more). This is a figure,`,
    "not a check: under injected faults the renewal on arrival can itself fail. In a 60 s diagnostic run every such",
    "grant came back about `requestTimeoutMs` after the server granted it, its renewal's refresh call (shared by the",
    "client's grants of that moment) having lost its request or its answer to a dropped connection.",
    "",
  );
  return lines.join("\n");
}

/** The section result of a run, for `writeSection`. */
export function faultProxySection(r: FaultProxyScenarioResult, mode: "quick" | "soak", control?: NegativeControl): SectionResult {
  return {
    id: "2b-fault-proxy",
    order: 2,
    title: "2. Faults: TCP fault proxy",
    source: "packages/reliability/test/fault-proxy/",
    mode,
    date: new Date().toISOString(),
    machine: describeMachine(),
    seconds: r.seconds,
    operations: r.ledger.operations,
    faults: r.proxy.total,
    badInputs: 0,
    violations: r.violations.total + (control?.realViolations ?? 0),
    markdown: renderFaultProxyMarkdown(r, control),
  };
}
