import { checkName, formatSample, type Labels } from "./format-sample.js";
import type { Metric } from "./metric.js";
import { orderedLabels, seriesKey } from "./series-key.js";

interface Series {
  readonly labels: Labels;
  /** Non-cumulative count per bucket; rendering makes them cumulative. */
  readonly counts: number[];
  sum: number;
  count: number;
}

/**
 * A Prometheus histogram: counts of observations at or below each upper bound, plus their sum and
 * count, one series per label set. Same label rule as {@link Counter}: small fixed value sets only.
 */
export class Histogram<L extends string = never> implements Metric {
  readonly type = "histogram";
  readonly #labelNames: readonly L[];
  readonly #bounds: readonly number[];
  readonly #series = new Map<string, Series>();

  /**
   * @param buckets upper bounds, ascending; `+Inf` is implied and added when rendering.
   */
  constructor(
    readonly name: string,
    readonly help: string,
    labelNames: readonly L[],
    buckets: readonly number[],
  ) {
    checkName(name);
    labelNames.forEach(checkName);
    if (labelNames.includes("le" as L)) throw new Error("`le` is reserved for histogram buckets");
    for (let i = 1; i < buckets.length; i++) {
      if (!(buckets[i]! > buckets[i - 1]!)) throw new Error(`histogram ${name}: buckets must ascend`);
    }
    this.#labelNames = labelNames;
    this.#bounds = buckets;
  }

  /** Record one observation (for latencies: seconds, as Prometheus convention asks). */
  observe(labels: Readonly<Record<L, string>>, value: number): void {
    const key = seriesKey(this.#labelNames, labels);
    let series = this.#series.get(key);
    if (!series) {
      series = { labels: orderedLabels(this.#labelNames, labels), counts: new Array<number>(this.#bounds.length).fill(0), sum: 0, count: 0 };
      this.#series.set(key, series);
    }
    const index = this.#bounds.findIndex((bound) => value <= bound);
    if (index >= 0) series.counts[index]! += 1;
    series.sum += value;
    series.count += 1;
  }

  samples(): string[] {
    const lines: string[] = [];
    for (const series of this.#series.values()) {
      let cumulative = 0;
      this.#bounds.forEach((bound, i) => {
        cumulative += series.counts[i]!;
        lines.push(formatSample(`${this.name}_bucket`, { ...series.labels, le: String(bound) }, cumulative));
      });
      lines.push(formatSample(`${this.name}_bucket`, { ...series.labels, le: "+Inf" }, series.count));
      lines.push(formatSample(`${this.name}_sum`, series.labels, series.sum));
      lines.push(formatSample(`${this.name}_count`, series.labels, series.count));
    }
    return lines;
  }
}
