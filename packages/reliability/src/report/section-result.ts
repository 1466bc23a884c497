/**
 * What one section of the reliability suite reports when it finishes. Each section writes one of
 * these to `packages/reliability/results/<id>.json`; {@link renderReport} turns all of them into
 * `docs/reliability.md`, so sections can run (and be re-run) independently.
 */
export interface SectionResult {
  /** File name stem and sort key, for example `"1-mutual-exclusion"`. Sections sort by `order`, then `id`. */
  readonly id: string;
  /** Position in the report: 1 mutual exclusion, 2 faults, 3 bad input, 4 security. */
  readonly order: number;
  /** Heading of the section in the report, for example `"1. Mutual exclusion with fencing"`. */
  readonly title: string;
  /** The test file that produced it, relative to the repository root. */
  readonly source: string;
  /** `quick` in CI, `soak` under `pnpm test:soak`. */
  readonly mode: "quick" | "soak";
  /** ISO date of the run. */
  readonly date: string;
  /** Machine description, from {@link describeMachine}. */
  readonly machine: string;
  /** Wall-clock seconds the section took. */
  readonly seconds: number;
  /** Operations performed against the service (lock, unlock, refresh, resource operations, …). */
  readonly operations: number;
  /** Faults injected (pauses, kills, proxy faults, …); 0 where the section injects none. */
  readonly faults: number;
  /** Bad inputs tried; 0 where the section sends none. */
  readonly badInputs: number;
  /** Violations of the section's properties. The suite fails when this is not 0. */
  readonly violations: number;
  /** The section's body in Markdown (without its heading): what was checked, how, and what was found. */
  readonly markdown: string;
}
