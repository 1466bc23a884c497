/** The metric types this registry renders. */
export type MetricType = "counter" | "gauge" | "histogram";

/**
 * Anything the registry can render: a named family with its help and type, and its sample lines.
 * Implementations keep their own state; the registry only asks for lines at scrape time.
 */
export interface Metric {
  /** Family name, for example `leasehold_held_locks`. */
  readonly name: string;
  /** One line saying what is counted, for people reading the scrape. */
  readonly help: string;
  readonly type: MetricType;
  /** The sample lines of this family, without the `# HELP` / `# TYPE` header. */
  samples(): string[];
}
