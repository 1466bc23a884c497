import { describeMachine, writeSection, type SectionResult } from "../../../src/report/index.js";
import type { SecurityTally } from "./security-tally.js";

/** The test file that produces section 4, relative to the repository root. */
export const SECURITY_SOURCE = "packages/reliability/test/security/security.test.ts";

/** The limits the server of the run was started with. */
export interface SecurityLimits {
  readonly maxConnections: number;
  readonly maxWaitingPerNamespace: number;
  readonly rateLimit: number;
  readonly leaseMs: number;
}

/** What packages/server/test/security/ checks, as unit and end-to-end tests, summarised for the report. */
const UNIT_TESTS: readonly string[] = [
  "`bearer-auth.test.ts`: the auth table parser and loader (`--auth-file` wins over `LEASEHOLD_AUTH_TOKENS`; malformed tables are refused with a message that never quotes a token); the matcher (a namespace's token or a `*` token, scheme case, near misses, bare tokens and `Basic` refused); over `startServer`, one identical 401 for every namespace, body and method, nothing queued or created by a refused request, `/v1/health` open, `/metrics` needing a `*` token, 404 unaffected; a server without a table accepts any header.",
  "`limits.test.ts`: the waiting limit (429 with its details, nothing queued, the refused `requestId` not recorded, grantable and non-waiting requests and other namespaces unaffected, the queue draining in order; the embedded service too); the token bucket on a fake clock (burst, `retry-after` in whole seconds, refill); the 429 coming before validation; one bucket per client address (127.0.0.1 and 127.0.0.2); the connection limit's 503 with a JSON body, connections within the limit served, a slot freed when a connection closes.",
  "`token-leak.test.ts`: every log line at `trace` and `/metrics` captured over a workload of every operation, lease lapses, disconnected waiters, undelivered grants, errors and shutdown: no lock token and no bearer token in any of them.",
  "`cli-security.test.ts`: `startServer()` and the CLI bind 127.0.0.1 without `--host`; `--help` lists every security flag with its default; bad values of the limit flags and `--auth-token` (tokens are never accepted on the command line) exit 2 without echoing a token; `--auth-file` and `LEASEHOLD_AUTH_TOKENS` are enforced; a malformed table in the environment stops the server at start without quoting it.",
];

/** Options of {@link securitySection}. */
export interface SecurityRun {
  readonly mode: "quick" | "soak";
  readonly seconds: number;
  readonly tally: SecurityTally;
  readonly limits: SecurityLimits;
}

/**
 * Section 4 of the report: operations = every HTTP request and client call of the run, bad inputs =
 * the unauthenticated and over-limit requests, faults = 0 (the section injects none), violations =
 * every failed check. The Markdown names the server's settings, tabulates the checks and their
 * answers, gives the measured figures, and summarises the server package's own security tests.
 */
export function securitySection({ mode, seconds, tally, limits }: SecurityRun): SectionResult {
  const totals = tally.totals();
  const lines: string[] = [
    "A real server: `node packages/server/dist/cli.js --port 0 --auth-file <table> --max-connections",
    `${limits.maxConnections} --max-waiting-per-namespace ${limits.maxWaitingPerNamespace} --rate-limit ${limits.rateLimit} --lease-ms ${limits.leaseMs} --log-level debug\``,
    "(no `--host`), with a table of three random 48-character bearer tokens: one for `*`, one for",
    "`billing`, one for `orders`. Requests are written byte for byte on fresh TCP connections from",
    "loopback source addresses (127.0.x.y: the rate limit keys on the client address, so ordinary",
    "traffic is spread far below it and the flood has an address of its own); three `LockClient.http`",
    "clients with bearer tokens run a workload next to them. fast-check generates the requests; any",
    "failed check counts as a violation and fails the test.",
    "",
    "- **Refused credentials**: missing, malformed (scheme misspelt or missing, `Basic`, tabs, NBSP,",
    "  two tokens, latin1 bytes, random text, many built around a real token), wrong (near misses of",
    "  real tokens, random, 1,000-6,000 characters) and another namespace's token, on every operation",
    "  route with every method and bodies that would change `billing` if served (unlock its held token,",
    "  cancel its waiter, queue behind its lock), and on `GET /metrics`. Each operation request goes",
    "  to `billing` (holding a lock and a waiter, under one of its percent-encoded spellings), to a",
    "  never-used namespace and to an invalid one: all three must be 401 `UNAUTHENTICATED` with",
    "  `www-authenticate: Bearer realm=\"leasehold\"` and the one reference body, and byte-identical",
    "  apart from the `date` header's value. The lock table's metrics (held, waiting, namespaces,",
    "  grants, timeouts, lapses, unlocks, abandons) are equal before and after each batch.",
    "- **Valid tokens**: the namespace's own token or the `*` token, the scheme in any case, extra",
    "  spaces, on every operation: served, answers matching the protocol's schemas; a wrong method",
    "  gets 405 and an invalid namespace 400 (authentication passed, the ordinary checks followed).",
    "- **Limits**: a flood over the rate limit, requests that would wait beyond the waiting limit,",
    "  and connections beyond the connection limit (figures below).",
    "- **Binding and leaks**: no listener on any other address of the machine; no lock token any",
    "  client received and no bearer token in the server's stdout at debug, its stderr, `/metrics`",
    "  after the run, or the clients' logs.",
    "",
    `**Total: ${totals.cases} cases, ${totals.requests} requests (${totals.badInputs} unauthenticated or over a limit), ${totals.violations} violations.**`,
    "",
    "| check | cases | requests | of which unauthenticated or over a limit | violations | answers seen |",
    "| --- | ---: | ---: | ---: | ---: | --- |",
  ];
  for (const [check, count] of tally.checks) {
    const outcomes = [...count.outcomes.entries()].sort((a, b) => b[1] - a[1]).map(([o, n]) => `${o} ×${n}`).join("; ");
    lines.push(`| ${check} | ${count.cases} | ${count.requests} | ${count.badInputs} | ${count.violations} | ${outcomes.replaceAll("|", "\\|")} |`);
  }
  lines.push("", "### Figures and findings", "", ...tally.observations.map((o) => `- ${o}`));
  lines.push("", "### Unit and end-to-end tests in `packages/server/test/security/`", "", "Run with the rest of the unit tests on every push:", "", ...UNIT_TESTS.map((t) => `- ${t}`));
  return {
    id: "4-security",
    order: 4,
    title: "4. Security",
    source: SECURITY_SOURCE,
    mode,
    date: new Date().toISOString(),
    machine: describeMachine(),
    seconds,
    operations: totals.requests,
    faults: 0,
    badInputs: totals.badInputs,
    violations: totals.violations,
    markdown: lines.join("\n"),
  };
}

/** Store section 4's result and rebuild docs/reliability.md (see `writeSection`). */
export function writeSecuritySection(run: SecurityRun): void {
  writeSection(securitySection(run));
}
