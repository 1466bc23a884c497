/**
 * Broken checks, counted per check with the first few details of each kept for the report and the
 * test's failure message.
 */
export class Violations {
  readonly #counts = new Map<string, number>();
  readonly #examples = new Map<string, string[]>();

  constructor(readonly examplesPerCheck = 5) {}

  /** Count one violation of `check`, described by `detail`. */
  add(check: string, detail: string): void {
    this.#counts.set(check, (this.#counts.get(check) ?? 0) + 1);
    const list = this.#examples.get(check) ?? [];
    if (list.length < this.examplesPerCheck) list.push(detail);
    this.#examples.set(check, list);
  }

  /** Violations of one check (0 when none). */
  count(check: string): number {
    return this.#counts.get(check) ?? 0;
  }

  /** All violations. */
  get total(): number {
    let sum = 0;
    for (const n of this.#counts.values()) sum += n;
    return sum;
  }

  /** Every violated check with its count and examples, for a failure message. */
  describe(): string {
    const lines: string[] = [];
    for (const [check, n] of this.#counts) {
      lines.push(`${check}: ${n}`);
      for (const e of this.#examples.get(check) ?? []) lines.push(`  - ${e}`);
    }
    return lines.join("\n");
  }
}
