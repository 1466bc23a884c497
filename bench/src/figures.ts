/** One measured number, as it appears in `bench/results/latest.json`. */
export interface Figure {
  /** Stable name; issues and docs refer to figures by it. */
  readonly name: string;
  readonly value: number;
  /** For example `pairs/s`, `ms`, `bytes`, `ratio`. */
  readonly unit: string;
  /** The command that measured it, so anyone can run it again. */
  readonly command: string;
  /** Whether the run was `--quick` (fewer iterations, noisier). */
  readonly quick?: boolean | undefined;
  /** A short human note: workload, sample size. */
  readonly note?: string | undefined;
}

/** The whole results file. */
export interface Results {
  readonly machine: string;
  readonly date: string;
  readonly node: string;
  readonly figures: Figure[];
}

/** What every suite receives. */
export interface SuiteContext {
  readonly quick: boolean;
  /** The command line that reproduces this suite's figures. */
  readonly command: string;
  /** Print one progress line. */
  progress(message: string): void;
}

/** A benchmark suite: a name for the command line and a function producing figures. */
export interface Suite {
  readonly name: string;
  readonly description: string;
  /** False for suites only run when named (for example the peer benchmarks). Default true. */
  readonly defaultOn?: boolean | undefined;
  run(ctx: SuiteContext): Promise<Figure[]>;
}
