import type { ServerTap, TokenRecord } from "./server-tap.js";
import type { Violations } from "../violations.js";

/** Options of {@link checkGrants}. */
export interface CheckGrantsOptions {
  readonly tap: ServerTap;
  /** The server's `leaseMs`. */
  readonly leaseMs: number;
  /** Every token a client (the test's own code) received in an answer. */
  readonly received: ReadonlySet<string>;
  /**
   * Per namespace, the fencing numbers the server handed out during the run: `[first, next)`, read
   * from `snapshot().nextTimestamp` before and after. Only namespaces whose requests name one
   * descriptor each and that never ask for timestamps may be listed: there every number is exactly
   * one grant.
   */
  readonly issued: ReadonlyMap<string, { readonly first: number; readonly next: number }>;
  readonly violations: Violations;
}

/** What {@link checkGrants} counted besides violations. */
export interface GrantFigures {
  /** Tokens the server granted. */
  readonly tokens: number;
  /** Lock calls with a requestId that arrived while that request's token was certainly held. */
  readonly retriesWhileHeld: number;
  /** Lock calls that waited, and of them those the server abandoned (the connection closed). */
  readonly waited: number;
  readonly abandoned: number;
  /** Granted tokens the test's clients never received, and how they ended. */
  readonly unreceived: number;
  readonly unreceivedReleased: number;
  readonly unreceivedLapsed: number;
  /** Fencing numbers accounted for (each one a grant the tap saw answered). */
  readonly fencingNumbers: number;
}

/**
 * Earliest the token can have left the table, on the server's clock: its release by unlock if any,
 * else a full lease after its latest renewal began (nothing else ends a token before that: the
 * server reaps only leases that ran out).
 */
export function endLowerBound(rec: TokenRecord, leaseMs: number): number {
  return Math.min(rec.unlockBefore ?? Infinity, rec.maxRenewBefore + leaseMs);
}

function describe(rec: TokenRecord): string {
  return `${rec.namespace} requestId ${String(rec.requestId)} fencing ${rec.acquired.map((a) => `${a.descriptor}:${a.mode}:${a.fencingToken}`).join(",")}`;
}

/**
 * Check the tap's grant history after the run. Every comparison is made so that a violation is
 * certain, never an artefact of timing: a grant time is an upper bound, an end time a lower bound.
 * - `answer-consistency`: every answer carrying a token names the same requestId and fencing tokens;
 * - `exclusive-overlap`: on each descriptor, taking grants in fencing-token order (the order the
 *   engine made them), no grant came before the end of an earlier conflicting one (exclusive with
 *   anything);
 * - `double-grant`: no requestId was granted a second token before its first one ended;
 * - `retry-answer`: a lock call whose requestId's token was certainly held throughout the call
 *   (granted before it began, not ended before it was answered) was answered that very token;
 * - `unreceived-refreshed`: a token no client received was never refreshed (nothing keeps it alive
 *   past one lease from its last answer);
 * - `grant-to-nobody`: every fencing number handed out in an accounted namespace belongs to a grant
 *   the server answered to a waiting caller: an abandoned request was never granted later.
 */
export function checkGrants(options: CheckGrantsOptions): GrantFigures {
  const { tap, leaseMs, received, violations } = options;
  const end = (rec: TokenRecord): number => endLowerBound(rec, leaseMs);

  const perDescriptor = new Map<string, { rec: TokenRecord; exclusive: boolean; fencing: number }[]>();
  const perRequest = new Map<string, TokenRecord[]>();
  let unreceived = 0;
  let unreceivedReleased = 0;
  for (const rec of tap.tokens.values()) {
    for (const issue of rec.inconsistencies) violations.add("answer-consistency", `${describe(rec)}: ${issue}`);
    for (const a of rec.acquired) {
      const key = `${rec.namespace}\u0000${a.descriptor}`;
      const list = perDescriptor.get(key) ?? [];
      list.push({ rec, exclusive: a.mode === "exclusive", fencing: a.fencingToken });
      perDescriptor.set(key, list);
    }
    if (rec.requestId !== undefined) {
      const key = `${rec.namespace}\u0000${rec.requestId}`;
      perRequest.set(key, [...(perRequest.get(key) ?? []), rec]);
    }
    if (!received.has(rec.token)) {
      unreceived++;
      if (rec.unlockBefore !== undefined) unreceivedReleased++;
      if (rec.refreshes > 0) violations.add("unreceived-refreshed", `${describe(rec)} was refreshed ${rec.refreshes} times`);
    }
  }

  for (const grants of perDescriptor.values()) {
    grants.sort((a, b) => a.fencing - b.fencing);
    let allEnd = -Infinity;
    let exclusiveEnd = -Infinity;
    let allBy: TokenRecord | undefined;
    let exclusiveBy: TokenRecord | undefined;
    for (const g of grants) {
      const [limit, by] = g.exclusive ? [allEnd, allBy] : [exclusiveEnd, exclusiveBy];
      if (by !== undefined && g.rec.grantedBy < limit) {
        violations.add(
          "exclusive-overlap",
          `${describe(g.rec)} granted by ${g.rec.grantedBy.toFixed(1)} ms while ${describe(by)} held it until at least ${limit.toFixed(1)} ms`,
        );
      }
      const e = end(g.rec);
      if (e > allEnd) [allEnd, allBy] = [e, g.rec];
      if (g.exclusive && e > exclusiveEnd) [exclusiveEnd, exclusiveBy] = [e, g.rec];
    }
  }

  for (const tokens of perRequest.values()) {
    const ordered = [...tokens].sort((a, b) => (a.acquired[0]?.fencingToken ?? 0) - (b.acquired[0]?.fencingToken ?? 0));
    let latest: TokenRecord | undefined;
    for (const rec of ordered) {
      if (latest !== undefined && rec.grantedBy < end(latest)) {
        violations.add("double-grant", `${describe(rec)} granted while its earlier token (${describe(latest)}) was still held`);
      }
      if (latest === undefined || end(rec) > end(latest)) latest = rec;
    }
  }

  let retriesWhileHeld = 0;
  let waited = 0;
  let abandoned = 0;
  for (const call of tap.calls) {
    if (call.waited) waited++;
    if (call.outcome === "cancelled") abandoned++;
    if (call.requestId === undefined || call.end === undefined) continue;
    const callEnd = call.end;
    const held = tap.byRequestId(call.namespace, call.requestId).find((rec) => rec.grantedBy <= call.begin && end(rec) >= callEnd);
    if (held === undefined) continue;
    retriesWhileHeld++;
    if (call.outcome !== "acquired" || call.token !== held.token) {
      violations.add("retry-answer", `${describe(held)}: a retry while it was held was answered ${call.outcome}${call.token === held.token ? "" : " with another token"}`);
    }
  }

  let fencingNumbers = 0;
  for (const [namespace, range] of options.issued) {
    const seen = new Set<number>();
    for (const rec of tap.tokens.values()) {
      if (rec.namespace !== namespace) continue;
      for (const a of rec.acquired) seen.add(a.fencingToken);
    }
    for (let n = range.first; n < range.next; n++) {
      if (!seen.has(n)) violations.add("grant-to-nobody", `${namespace}: fencing number ${n} was handed out but no caller was answered its grant`);
    }
    for (const n of seen) {
      if (n < range.first || n >= range.next) violations.add("grant-to-nobody", `${namespace}: fencing number ${n} is outside what the namespace handed out`);
    }
    fencingNumbers += range.next - range.first;
  }

  return {
    tokens: tap.tokens.size,
    retriesWhileHeld,
    waited,
    abandoned,
    unreceived,
    unreceivedReleased,
    unreceivedLapsed: unreceived - unreceivedReleased,
    fencingNumbers,
  };
}
