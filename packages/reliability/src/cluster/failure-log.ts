/** One member's failure: from the fault until the member was back and the cluster whole again. */
export interface Failure {
  readonly member: number;
  /** What was done to it: `SIGTERM`, `SIGKILL` or `SIGSTOP`. */
  readonly how: string;
  /** When the fault was injected (the recorder's clock, `performance.now()`). */
  readonly from: number;
  /** When the member was back and every shard had an in-sync standby again; `undefined` while open. */
  to: number | undefined;
}

/** A stretch of the run with a constant number of failed members. */
export interface FailurePhase {
  readonly from: number;
  readonly to: number;
  /** Members down, stopped or not yet recovered during the phase. */
  readonly failed: number;
  /** The open failures, e.g. `member 1 SIGKILL`. */
  readonly what: readonly string[];
}

/**
 * When each member of the test cluster was failed, for the "no lock lost to a single failure"
 * check: a failure lasts from the fault until the member is a ready member again *and* every shard
 * has an in-sync standby (until then the cluster is still recovering from it: a second fault then
 * is a second failure, whatever the process table says).
 */
export class FailureLog {
  readonly #failures: Failure[] = [];

  /** @param now - The clock failures are stamped with; the ledger's (default `performance.now`). */
  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Member `member` was failed now by `how`. */
  down(member: number, how: string): void {
    this.#failures.push({ member, how, from: this.now(), to: undefined });
  }

  /** Member `member` is back and the cluster whole again: its open failures end now. */
  up(member: number): void {
    const at = this.now();
    for (const f of this.#failures) if (f.member === member && f.to === undefined) f.to = at;
  }

  /** Every failure so far, in the order injected. */
  get failures(): readonly Failure[] {
    return this.#failures;
  }

  /** The most failures open at one moment of `[from, to]`. */
  maxFailedWithin(from: number, to: number): number {
    const open = (t: number): number => this.#failures.filter((f) => f.from <= t && (f.to === undefined || t < f.to)).length;
    const moments = [from, ...this.#failures.map((f) => f.from).filter((t) => t > from && t <= to)];
    return Math.max(0, ...moments.map(open));
  }

  /** The run from `start` to `end` cut into phases of a constant number of failed members. */
  phases(start: number, end: number): FailurePhase[] {
    const edges = new Set<number>([start, end]);
    for (const f of this.#failures) {
      if (f.from > start && f.from < end) edges.add(f.from);
      if (f.to !== undefined && f.to > start && f.to < end) edges.add(f.to);
    }
    const sorted = [...edges].sort((a, b) => a - b);
    const phases: FailurePhase[] = [];
    for (let i = 0; i + 1 < sorted.length; i++) {
      const from = sorted[i]!;
      const to = sorted[i + 1]!;
      const open = this.#failures.filter((f) => f.from <= from && (f.to === undefined || from < f.to));
      const what = open.map((f) => `member ${f.member} ${f.how}`);
      const last = phases.at(-1);
      if (last !== undefined && last.failed === open.length && last.what.join() === what.join()) phases[phases.length - 1] = { ...last, to };
      else phases.push({ from, to, failed: open.length, what });
    }
    return phases;
  }
}
