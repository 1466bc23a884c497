/** Counts of one check of the security section. */
export interface CheckCount {
  /** Generated cases (or steps) checked. */
  cases: number;
  /** HTTP requests sent for them. */
  requests: number;
  /** Of those, requests that were unauthenticated or over a limit: the section's bad inputs. */
  badInputs: number;
  violations: number;
  /** Outcome (`401 UNAUTHENTICATED`, `429 TOO_MANY_REQUESTS`) → how often it was seen. */
  readonly outcomes: Map<string, number>;
}

/** What the security section saw, check by check, plus measured figures for the report. */
export class SecurityTally {
  readonly checks = new Map<string, CheckCount>();
  /** Sentences for the report: measured figures and what each check found. */
  readonly observations: string[] = [];
  private running = new Map<string, number>();

  /** The counts of `check`, created on first use (so the report lists checks in the order they ran). */
  of(check: string): CheckCount {
    let found = this.checks.get(check);
    if (found === undefined) {
      found = { cases: 0, requests: 0, badInputs: 0, violations: 0, outcomes: new Map() };
      this.checks.set(check, found);
    }
    return found;
  }

  /** Count one outcome of `check`: `requests` requests sent, `bad` of them unauthenticated or over a limit. */
  record(check: string, outcome: string, requests: number, bad: number): void {
    const count = this.of(check);
    count.cases++;
    count.requests += requests;
    count.badInputs += bad;
    count.outcomes.set(outcome, (count.outcomes.get(outcome) ?? 0) + 1);
  }

  /** Count requests that were sent without being a case of their own (seeding, cleanup, scrapes). */
  extra(check: string, requests: number): void {
    this.of(check).requests += requests;
  }

  /** Count a violation of `check`. */
  violation(check: string): void {
    this.of(check).violations++;
  }

  /**
   * Run one test's checks. A failure not already counted by the property's checker (a setup step
   * that failed, a control refused) counts as a violation of `check`, then fails the test; so no run
   * that failed can report 0.
   */
  async guard(check: string, body: () => Promise<void>): Promise<void> {
    const before = this.totals().violations;
    this.running.set(check, (this.running.get(check) ?? 0) + 1);
    try {
      await body();
    } catch (err) {
      if (this.totals().violations === before) this.violation(check);
      throw err;
    } finally {
      this.running.set(check, (this.running.get(check) ?? 1) - 1);
    }
  }

  /** Count the tests still inside {@link SecurityTally.guard} (stopped by their timeout) as violations; call after the run. */
  countUnfinished(): void {
    for (const [check, n] of this.running) for (let i = 0; i < n; i++) this.violation(check);
    this.running.clear();
  }

  /** Sums over every check. */
  totals(): { cases: number; requests: number; badInputs: number; violations: number } {
    const sum = { cases: 0, requests: 0, badInputs: 0, violations: 0 };
    for (const c of this.checks.values()) {
      sum.cases += c.cases;
      sum.requests += c.requests;
      sum.badInputs += c.badInputs;
      sum.violations += c.violations;
    }
    return sum;
  }
}

/** `401 UNAUTHENTICATED`, `200`, `closed`: the outcome label of an answer with an optional protocol error code. */
export function outcomeOf(status: number | null, body: Buffer): string {
  if (status === null) return "closed, no answer";
  try {
    const parsed = JSON.parse(body.toString("utf8")) as { error?: { code?: unknown } };
    if (typeof parsed.error?.code === "string") return `${status} ${parsed.error.code}`;
  } catch {
    // Not JSON: the status alone says it.
  }
  return String(status);
}
