import { describeMachine, writeSection, type SectionResult } from "../../../src/report/index.js";
import type { Tally } from "./tally.js";

/** What a category checks, in the words of the report. */
export const CATEGORY_DESCRIPTIONS: Readonly<Record<string, string>> = {
  "malformed-json": "valid bodies truncated, with garbage spliced in, a BOM, trailing garbage, single quotes or a trailing comma (only texts JSON.parse refuses)",
  "invalid-utf8": "valid bodies with a non-UTF-8 byte sequence spliced in anywhere (stray continuation bytes, overlongs, CESU-8 surrogates, truncated sequences)",
  "deep-nesting": "arrays/objects nested 2..50,000 deep in a field, balanced or left open",
  "huge-arrays": "10,001..12,000 locks or tokens, 50,000+ numbers in a scalar field, an empty locks array",
  "oversize-bodies": "bodies of 1 MiB + 1 byte .. 3 MiB (padded JSON, token lists, 0xff bytes)",
  "wrong-types": "one field of a valid body replaced by any JSON value that field does not accept (independent oracle)",
  nulls: "one field or array entry of a valid body set to null",
  unicode: "lone surrogates (as \\ud800 escapes) in descriptors, enum look-alikes (combining marks, Cyrillic, full-width, ZWJ), unicode field names, unicode namespaces",
  "prototype-keys": "__proto__, constructor, prototype, toString, hasOwnProperty, valueOf, then … as own keys of the body or of a lock spec",
  numbers: "integer fields given 1e400, -1e400, -0, 1.5, 2^53+1, 1e21, bigints, random doubles and exponent forms (values the field accepts are skipped)",
  "oversize-descriptors": "descriptors of 1,025..4,096 UTF-8 bytes built from 1-4 byte characters (often fewer than 1,024 UTF-16 units)",
  "content-types": "state-changing bodies sent with a missing or non-JSON content type, or a charset other than UTF-8",
  headers: "random extra headers, malformed header lines (no colon, NUL, bare CR, obs-fold, bad content-length), one 17-80 KiB header, 1,000-3,000 headers",
  paths: "unknown paths and near misses (404 for any method), invalid and percent-mangled namespaces, raw non-ASCII bytes in the target, query strings",
  methods: "every other method node parses on every route (405), and methods node cannot parse (400)",
  framing: "raw sockets: content-length shorter/longer than the body, content-length with chunked, broken chunk sizes, overruns, missing last chunk",
  "slow-bodies": "a body trickled 1-4 bytes per write, 1-5 ms apart",
  "slow-headers": "a request head trickled 1-4 bytes per write, 1-5 ms apart",
};

/** What the suite found and how the server behaves where the protocol leaves room; kept next to the counts. */
export const FINDINGS: readonly string[] = [
  "Bug found and fixed: the content type was trimmed with `String#trim`, which also strips NBSP, so `application/json<NBSP>` (byte 0xA0 in the header) was served as JSON and its lock granted. `packages/server/src/http/check-content-type.ts` now trims only SP and HTAB; it answers 415 (regression test: `packages/reliability/test/bad-input/content-type-whitespace.test.ts`). VT and FF never reach the handler: node's parser refuses them with a JSON 400.",
  "A leading UTF-8 byte order mark is ignored (the UTF-8 decoder drops it), as RFC 8259 §8.1 allows; two BOMs are refused with 400. The malformed-JSON oracle treats one leading BOM as ignorable.",
  "Requests node's HTTP parser refuses (unknown methods, malformed header lines, a head over 16 KiB, content-length together with chunked) are answered 400 `INVALID_ARGUMENT` with the protocol's error body by the server's `clientError` handler (node would send a bare 400 or 431).",
  "When the framing breaks after the head was accepted (broken chunk size, chunk overrun, chunk-extension garbage, a content-length larger than the body followed by a half-close, a missing last chunk), the request handler is already running, so the server closes the connection without an answer; nothing is acquired and nothing is counted. A content-length shorter than the body leaves the rest to be parsed as a second, broken request: node closes the connection before the first request's 400 is written.",
  "Bodies over 1 MiB get 413 with `connection: close` before they are read; the answer arrived in every case even though the client kept writing.",
  "Prototype keys (`__proto__`, `constructor`, …) are own keys after JSON.parse and are refused as unknown fields; descriptors and requestIds with those names are ordinary strings (the engine uses Maps), as the controls show.",
];

/** Options of {@link badInputSection}. */
export interface BadInputRun {
  readonly mode: "quick" | "soak";
  readonly seconds: number;
  readonly tally: Tally;
}

/** The test file that produces section 3, relative to the repository root. */
export const BAD_INPUT_SOURCE = "packages/reliability/test/bad-input/bad-input.test.ts";

/**
 * Section 3 of the report from a finished run's tally: operations = generated cases + accepted-input
 * controls, bad inputs = generated cases, faults = slow or stalled connections of the pause and
 * stall tests, violations = every failed check. The Markdown is the category table, the findings and
 * this run's observations.
 */
export function badInputSection({ mode, seconds, tally }: BadInputRun): SectionResult {
  const { cases, violations } = tally.totals();
  const lines: string[] = [
    "Every case is a request written byte for byte to a fresh TCP connection (`node:net`) of a real",
    "`startServer`. The target namespace holds real locks (exclusive with a `requestId`, shared,",
    "permits, a descriptor named `__proto__`, immutable-timestamp locks) and three queued waiters.",
    "For every case the suite checks: the answer is the expected 4xx from the protocol's error table",
    "(or, where the body can never complete, a closed connection), never a 5xx and never a hang; the",
    "body is `{ error: { code, message, details } }`; `service.snapshot(namespace)` and",
    "`service.metrics()` are deep-equal to before the batch; `/v1/health` still answers.",
    "Accepted-input controls (descriptors at the limits, prototype names, number texts) show the",
    "oracle is not vacuous; clients that pause mid-request (and, in soak mode, stall for ever) show",
    "the server's timeouts answer or close, never a 5xx.",
    "",
    `**Total: ${cases} generated cases, ${tally.controls} accepted-input controls, ${tally.faults} slow or stalled connections, ${violations} violations.**`,
    "",
    "| category | what | cases | violations | answers seen |",
    "| --- | --- | ---: | ---: | --- |",
  ];
  for (const [category, count] of tally.categories) {
    const outcomes = [...count.outcomes.entries()].sort((a, b) => b[1] - a[1]).map(([o, n]) => `${o} ×${n}`).join("; ");
    lines.push(`| ${category} | ${CATEGORY_DESCRIPTIONS[category] ?? ""} | ${count.cases} | ${count.violations} | ${outcomes} |`);
  }
  if (tally.otherViolations.size > 0) {
    lines.push("", "Failed checks outside the generated categories:", "", ...[...tally.otherViolations].map(([test, n]) => `- ${test}: ${n}`));
  }
  lines.push("", "### Findings and observations", "", ...[...FINDINGS, ...tally.observations].map((o) => `- ${o}`));
  return {
    id: "3-bad-input",
    order: 3,
    title: "3. Bad input",
    source: BAD_INPUT_SOURCE,
    mode,
    date: new Date().toISOString(),
    machine: describeMachine(),
    seconds,
    operations: cases + tally.controls,
    faults: tally.faults,
    badInputs: cases,
    violations,
    markdown: lines.join("\n"),
  };
}

/** Store section 3's result and rebuild docs/reliability.md (see `writeSection`). */
export function writeBadInputSection(run: BadInputRun): void {
  writeSection(badInputSection(run));
}
