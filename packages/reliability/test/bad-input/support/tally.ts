import type { RawAnswer } from "./raw-http.js";
import { CATEGORIES, type BadCase, type Category } from "./cases.js";

/** Counts of one category: cases sent, violations found, and how the server answered. */
export interface CategoryCount {
  cases: number;
  violations: number;
  /** Outcome (`400 INVALID_ARGUMENT`, `closed`) → how often it was seen. */
  readonly outcomes: Map<string, number>;
  /** One example request description per outcome, for the report. */
  readonly examples: Map<string, string>;
}

/** What the suite saw: every case counted by category, plus free-form observations for the report. */
export class Tally {
  readonly categories = new Map<Category, CategoryCount>(CATEGORIES.map((c) => [c, { cases: 0, violations: 0, outcomes: new Map(), examples: new Map() }]));
  readonly observations: string[] = [];
  /** Accepted-input controls run next to the bad input (they prove the oracle is not vacuous). */
  controls = 0;
  /** Slow or stalled connections injected outside the generated categories (the pause and stall tests). */
  faults = 0;
  /**
   * Failed checks outside the generated categories (controls, slow clients, a batch that could not
   * be seeded, a test that never finished), by the test that failed; see {@link Tally.guard}.
   */
  readonly otherViolations = new Map<string, number>();
  private running = 0;

  private count(category: Category): CategoryCount {
    const found = this.categories.get(category);
    if (!found) throw new Error(`unknown category ${category}`);
    return found;
  }

  /** Count one case and the outcome the server gave it. */
  record(testCase: BadCase, answer: RawAnswer): void {
    const count = this.count(testCase.category);
    count.cases++;
    const answered = answer.status === null ? (answer.timedOut ? "no answer (client timeout)" : "connection closed, no answer") : `${answer.status} ${errorCodeOf(answer)}`;
    const outcome = testCase.variant === undefined ? answered : `${testCase.variant}: ${answered}`;
    count.outcomes.set(outcome, (count.outcomes.get(outcome) ?? 0) + 1);
    if (!count.examples.has(outcome)) count.examples.set(outcome, testCase.what.slice(0, 90));
  }

  /** Count a violation (a failed check) of `category`. */
  violation(category: Category): void {
    this.count(category).violations++;
  }

  /**
   * Run the checks of one test. Any failure the generated-case checker did not already count (a
   * control that was refused, a slow client without its answer, a seeding that failed) counts as a
   * violation of `test`, then fails the test as before; so no run that failed can report 0.
   */
  async guard(test: string, body: () => Promise<void>): Promise<void> {
    const before = this.totals().violations;
    this.running++;
    try {
      await body();
    } catch (err) {
      if (this.totals().violations === before) this.otherViolations.set(test, (this.otherViolations.get(test) ?? 0) + 1);
      throw err;
    } finally {
      this.running--;
    }
  }

  /** Count the tests still inside {@link Tally.guard} (stopped by their timeout) as violations; call after the run. */
  countUnfinished(): void {
    if (this.running > 0) this.otherViolations.set("did not finish (test timeout)", this.running);
    this.running = 0;
  }

  /** Total cases and violations over every category and every other check. */
  totals(): { cases: number; violations: number } {
    let cases = 0;
    let violations = 0;
    for (const c of this.categories.values()) {
      cases += c.cases;
      violations += c.violations;
    }
    for (const n of this.otherViolations.values()) violations += n;
    return { cases, violations };
  }
}

function errorCodeOf(answer: RawAnswer): string {
  try {
    const parsed = JSON.parse(answer.body.toString("utf8")) as { error?: { code?: unknown } };
    return typeof parsed.error?.code === "string" ? parsed.error.code : "(no error body)";
  } catch {
    return "(no JSON body)";
  }
}
