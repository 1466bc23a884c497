/** One broken check, with enough detail to find it again. */
export interface Violation {
  /** The name of the check, as the report lists it. */
  readonly check: string;
  /** What was seen. */
  readonly detail: string;
}

/**
 * Broken checks of one run. Every check reports here rather than throwing, so a run counts all its
 * violations (the report's number) and the test then fails on any. Kept in the order found, and
 * counted per check.
 */
export class Violations {
  readonly #list: Violation[] = [];
  readonly #counts = new Map<string, number>();

  /**
   * @param examplesPerCheck - how many details of each check {@link describe} shows. Default 5:
   *   enough to see a pattern, short enough for a failure message when a check fires thousands of
   *   times.
   */
  constructor(readonly examplesPerCheck = 5) {}

  /** Record one violation of `check`, described by `detail`. */
  add(check: string, detail: string): void {
    this.#list.push({ check, detail });
    this.#counts.set(check, (this.#counts.get(check) ?? 0) + 1);
  }

  /** Record a violation of `check` unless `ok` (the detail is only built then). Returns `ok`. */
  expect(ok: boolean, check: string, detail: () => string): boolean {
    if (!ok) this.add(check, detail());
    return ok;
  }

  /** Violations of one check (0 when none). */
  count(check: string): number {
    return this.#counts.get(check) ?? 0;
  }

  /** All violations. */
  get total(): number {
    return this.#list.length;
  }

  /** Every violation, in the order found. */
  list(): readonly Violation[] {
    return this.#list;
  }

  /** The first `n` violations as text, one a line: empty when there are none. */
  summary(n = 20): string {
    return this.#list
      .slice(0, n)
      .map((v) => `${v.check}: ${v.detail}`)
      .join("\n");
  }

  /** Every violated check with its count and its first details, for a failure message or a report. */
  describe(): string {
    const lines: string[] = [];
    for (const [check, n] of this.#counts) {
      lines.push(`${check}: ${n}`);
      let shown = 0;
      for (const v of this.#list) {
        if (shown === this.examplesPerCheck) break;
        if (v.check === check) {
          lines.push(`  - ${v.detail}`);
          shown++;
        }
      }
    }
    return lines.join("\n");
  }
}
