/** One broken check, with enough detail to find it again. */
export interface Violation {
  /** The name of the check, as the report lists it. */
  readonly check: string;
  /** What was seen. */
  readonly detail: string;
}

/**
 * Counts broken checks. Every check of the crash scenarios reports here rather than throwing, so a
 * run counts all its violations (the report's number) and the test then fails on any.
 */
export class Violations {
  readonly #list: Violation[] = [];

  /** Record one broken check. */
  add(check: string, detail: string): void {
    this.#list.push({ check, detail });
  }

  /** Record a broken check unless `ok`. Returns `ok`. */
  expect(ok: boolean, check: string, detail: () => string): boolean {
    if (!ok) this.add(check, detail());
    return ok;
  }

  /** How many checks broke. */
  get count(): number {
    return this.#list.length;
  }

  /** Every violation, in the order found. */
  list(): readonly Violation[] {
    return this.#list;
  }

  /** The first `n` violations as text, for a test failure message. */
  summary(n = 20): string {
    return this.#list
      .slice(0, n)
      .map((v) => `${v.check}: ${v.detail}`)
      .join("\n");
  }
}
