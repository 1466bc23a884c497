/** How many examples of violations a check keeps (the count is always complete). */
export const MAX_EXAMPLES = 10;

/** The outcome of one rule of the history checker. */
export interface CheckResult {
  /** The rule's short name, e.g. `"(a) no overlapping conflicting leases"`. */
  readonly rule: string;
  /** How many items the rule examined (intervals, grants, operations, descriptors; the rule says which). */
  readonly checked: number;
  /** How many of them broke the rule. 0 means the rule holds for the whole history. */
  readonly violations: number;
  /** Up to {@link MAX_EXAMPLES} violations, each in words with the events involved. */
  readonly examples: readonly string[];
}

/** Accumulates one rule's violations while keeping only the first few examples. */
export class ViolationLog {
  #violations = 0;
  readonly #examples: string[] = [];

  /** Count one violation; `describe` is only called while examples are still being kept. */
  add(describe: () => string): void {
    this.#violations++;
    if (this.#examples.length < MAX_EXAMPLES) this.#examples.push(describe());
  }

  /** Count `n` violations at once, described by one example. */
  addMany(n: number, describe: () => string): void {
    if (n <= 0) return;
    this.#violations += n;
    if (this.#examples.length < MAX_EXAMPLES) this.#examples.push(describe());
  }

  /** The finished result. */
  result(rule: string, checked: number): CheckResult {
    return { rule, checked, violations: this.#violations, examples: [...this.#examples] };
  }
}

/** Group items by descriptor, keeping their order within each group. */
export function byDescriptor<T extends { readonly descriptor: string }>(items: readonly T[]): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const group = groups.get(item.descriptor);
    if (group === undefined) groups.set(item.descriptor, [item]);
    else group.push(item);
  }
  return groups;
}

/** A time for messages, in ms with one decimal. */
export function ms(t: number): string {
  return `${t.toFixed(1)} ms`;
}
