import { checkName, formatSample, type Labels } from "./format-sample.js";
import type { Metric } from "./metric.js";
import { orderedLabels, seriesKey } from "./series-key.js";

/**
 * A monotonically increasing count, one series per distinct label set. Label values must come from
 * small fixed sets chosen by the server (operation names, status codes), never from request data:
 * every distinct value is a series kept forever.
 */
export class Counter<L extends string = never> implements Metric {
  readonly type = "counter";
  readonly #labelNames: readonly L[];
  readonly #series = new Map<string, { labels: Labels; value: number }>();

  constructor(
    readonly name: string,
    readonly help: string,
    labelNames: readonly L[] = [],
  ) {
    checkName(name);
    labelNames.forEach(checkName);
    this.#labelNames = labelNames;
  }

  /** Add `amount` (default 1, never negative) to the series of `labels`. */
  inc(labels: Readonly<Record<L, string>>, amount = 1): void {
    if (amount < 0) throw new Error(`counter ${this.name} cannot decrease`);
    const key = seriesKey(this.#labelNames, labels);
    const series = this.#series.get(key);
    if (series) series.value += amount;
    else this.#series.set(key, { labels: orderedLabels(this.#labelNames, labels), value: amount });
  }

  /** The current value of one series (0 when never incremented). */
  get(labels: Readonly<Record<L, string>>): number {
    return this.#series.get(seriesKey(this.#labelNames, labels))?.value ?? 0;
  }

  samples(): string[] {
    return [...this.#series.values()].map((s) => formatSample(this.name, s.labels, s.value));
  }
}
