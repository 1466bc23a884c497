import { expect } from "vitest";
import type { Harness } from "./harness.js";
import { leakedIn } from "./token-scan.js";

/** Check name in the report. */
export const LEAK_CHECK = "no token in logs or metrics";

/** Options of {@link checkTokenLeaks}. */
export interface LeakScan {
  readonly harness: Harness;
  /** What the clients logged (pino at debug). */
  readonly clientLogs: readonly string[];
  /** Bearer-like strings presented with refused requests (near misses of real tokens). */
  readonly presented: ReadonlySet<string>;
}

/**
 * After the run: scrape `/metrics`, stop the server (SIGTERM, exit 0), then look for every lock
 * token any client received and every bearer token (the table's and the near misses presented) in
 * the server's stdout (pino at debug, start to stop), its stderr, the scraped metrics and the
 * clients' logs. The lease-lapse path must have logged, so the scan covers it.
 */
export async function checkTokenLeaks({ harness: h, clientLogs, presented }: LeakScan): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!h.server.stdout.some((l) => l.includes("lease lapsed")) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  const metrics = await h.scrape(LEAK_CHECK);
  const code = await h.server.stop();
  expect(code, "the server did not stop cleanly on SIGTERM").toBe(0);
  const stdout = h.server.stdout.join("\n");
  const stderr = h.server.stderr();
  const client = clientLogs.join("");
  expect(stdout, "the lease-lapse log line (the path most likely to name a token) never ran").toContain("lease lapsed");
  expect(stdout).toContain('"msg":"stopped"');
  const lockTokens = [...h.received];
  const bearer = [h.secrets.admin, h.secrets.billing, h.secrets.orders, ...presented];
  const places = { "server stdout": stdout, "server stderr": stderr, "/metrics": metrics, "client logs": client };
  const leaks: string[] = [];
  for (const [place, text] of Object.entries(places)) {
    const lock = leakedIn(text, lockTokens);
    const secret = leakedIn(text, bearer);
    h.tally.record(LEAK_CHECK, `${place}: ${lock.length} lock tokens, ${secret.length} bearer tokens found`, 0, 0);
    if (lock.length > 0) leaks.push(`${lock.length} lock tokens in ${place}`);
    if (secret.length > 0) leaks.push(`${secret.length} bearer tokens in ${place}`);
  }
  for (const _leak of leaks) h.tally.violation(LEAK_CHECK);
  h.tally.observations.push(
    `Token scan: ${lockTokens.length} lock tokens received by clients and ${bearer.length} bearer tokens (the table's 3 and ${presented.size} near misses presented) looked for in ${h.server.stdout.length} server log lines at debug (${(stdout.length / 1024).toFixed(0)} KiB, including ${h.server.stdout.filter((l) => l.includes("lease lapsed")).length} lease-lapse lines), ${stderr.length} bytes of stderr, ${(metrics.length / 1024).toFixed(0)} KiB of /metrics and ${clientLogs.length} client log lines: ${leaks.length === 0 ? "none found" : leaks.join("; ")}.`,
  );
  expect(leaks, "tokens leaked").toEqual([]);
  expect(lockTokens.length, "the scan had nothing to look for").toBeGreaterThan(20);
}
