import type { LockAcquiredResponse } from "@leasehold/protocol";
import type { ServerTap } from "./server-tap.js";
import type { Violations } from "../violations.js";

/**
 * What the clients did and saw: operations by kind, outcomes, the slowest settle time per kind,
 * and every token they received, each checked against the server's own record at once.
 */
export class ClientLedger {
  /** Tokens the test's clients received in a lock answer. */
  readonly received = new Set<string>();
  /**
   * Every `LockClient.lock` call whose grant was already lapsed by the client's own lease measure
   * (`isHeld()` false) when the call returned, with how long the call took.
   */
  readonly lapsedOnReturn: { readonly token: string; readonly ms: number }[] = [];
  readonly #ops = new Map<string, number>();
  readonly #outcomes = new Map<string, number>();
  readonly #slowest = new Map<string, number>();

  constructor(
    readonly tap: ServerTap,
    readonly violations: Violations,
  ) {}

  /** Count one operation of `kind` (`lock`, `unlock`, `raw-lock`, …). */
  op(kind: string): void {
    this.#ops.set(kind, (this.#ops.get(kind) ?? 0) + 1);
  }

  /** Count how an operation of `kind` ended (`acquired`, `timeout`, `UNAVAILABLE`, `ECONNRESET`, …). */
  outcome(kind: string, what: string): void {
    const key = `${kind} → ${what}`;
    this.#outcomes.set(key, (this.#outcomes.get(key) ?? 0) + 1);
  }

  /** Note how long an operation of `kind` took to settle. */
  settled(kind: string, ms: number): void {
    this.#slowest.set(kind, Math.max(this.#slowest.get(kind) ?? 0, ms));
  }

  /**
   * A client received a grant for `requestId` (undefined: the client chose it): it must be one the
   * server made, for that requestId (for some requestId), with the same fencing tokens
   * (`client-grant-matches-server`).
   */
  sawGrant(namespace: string, requestId: string | undefined, answer: LockAcquiredResponse): void {
    this.received.add(answer.token);
    const rec = this.tap.tokens.get(answer.token);
    const same =
      rec !== undefined &&
      rec.namespace === namespace &&
      (requestId === undefined ? rec.requestId !== undefined : rec.requestId === requestId) &&
      rec.acquired.length === answer.acquired.length &&
      rec.acquired.every((a, i) => a.fencingToken === answer.acquired[i]?.fencingToken && a.descriptor === answer.acquired[i]?.descriptor);
    if (!same) {
      this.violations.add(
        "client-grant-matches-server",
        `${namespace} requestId ${String(requestId)}: received ${JSON.stringify(answer.acquired)}, the server recorded ${rec === undefined ? "no such token" : `requestId ${String(rec.requestId)} ${JSON.stringify(rec.acquired)}`}`,
      );
    }
  }

  /** Operations counted, all kinds. */
  get operations(): number {
    let sum = 0;
    for (const n of this.#ops.values()) sum += n;
    return sum;
  }

  /** Operations per kind, sorted by kind. */
  opsByKind(): [string, number][] {
    return [...this.#ops].sort(([a], [b]) => a.localeCompare(b));
  }

  /** How many operations of `kind` ended with `what`. */
  outcomeCount(kind: string, what: string): number {
    return this.#outcomes.get(`${kind} → ${what}`) ?? 0;
  }

  /** Outcomes, sorted by operation then outcome. */
  outcomes(): [string, number][] {
    return [...this.#outcomes].sort(([a], [b]) => a.localeCompare(b));
  }

  /** Slowest settle time per kind, in ms. */
  slowest(): [string, number][] {
    return [...this.#slowest].sort(([a], [b]) => a.localeCompare(b));
  }
}
