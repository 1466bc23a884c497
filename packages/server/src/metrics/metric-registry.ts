import { escapeHelp } from "./format-sample.js";
import type { Metric } from "./metric.js";

/** The content type of the Prometheus text exposition format this registry writes. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/**
 * A small hand-written metric registry: it holds metric families and renders them in the
 * Prometheus text exposition format. A dependency would be more than this whole directory.
 */
export class MetricRegistry {
  readonly #metrics = new Map<string, Metric>();

  /** Add a family and return it, so registration reads as a declaration. Names must be unique. */
  register<M extends Metric>(metric: M): M {
    if (this.#metrics.has(metric.name)) throw new Error(`metric ${metric.name} is already registered`);
    this.#metrics.set(metric.name, metric);
    return metric;
  }

  /** Every family with its `# HELP` and `# TYPE` lines, ending with a line feed. */
  render(): string {
    const lines: string[] = [];
    for (const metric of this.#metrics.values()) {
      lines.push(`# HELP ${metric.name} ${escapeHelp(metric.help)}`, `# TYPE ${metric.name} ${metric.type}`);
      lines.push(...metric.samples());
    }
    return lines.join("\n") + "\n";
  }
}
