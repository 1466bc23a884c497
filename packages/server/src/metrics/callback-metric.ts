import { checkName, formatSample, type Labels } from "./format-sample.js";
import type { Metric, MetricType } from "./metric.js";

/**
 * An unlabelled gauge or counter whose value is read from its owner at scrape time. The lock
 * service already keeps these numbers; copying them into a second store would only let them drift.
 */
export class CallbackMetric implements Metric {
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: Exclude<MetricType, "histogram">,
    private readonly read: () => number,
    /** Fixed labels, for `_info` style metrics; never request data. Default: none. */
    private readonly labels: Labels = {},
  ) {
    checkName(name);
  }

  samples(): string[] {
    return [formatSample(this.name, this.labels, this.read())];
  }
}
