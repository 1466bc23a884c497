/** Label names and values of one sample, in a fixed order. */
export type Labels = Readonly<Record<string, string>>;

/**
 * Escape a label value as the Prometheus text format requires: backslash, double quote and line
 * feed are the only characters with a meaning inside the quotes.
 */
export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

/** Help text escaping: only backslash and line feed are special there. */
export function escapeHelp(help: string): string {
  return help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

/** `{a="1",b="2"}`, or the empty string when there are no labels. */
export function formatLabels(labels: Labels): string {
  const parts = Object.entries(labels).map(([name, value]) => `${name}="${escapeLabelValue(value)}"`);
  return parts.length === 0 ? "" : `{${parts.join(",")}}`;
}

/** A sample value: Prometheus spells the infinities `+Inf` and `-Inf`. */
export function formatValue(value: number): string {
  if (value === Number.POSITIVE_INFINITY) return "+Inf";
  if (value === Number.NEGATIVE_INFINITY) return "-Inf";
  return Number.isNaN(value) ? "NaN" : String(value);
}

/** One exposition line: `name{labels} value`. */
export function formatSample(name: string, labels: Labels, value: number): string {
  return `${name}${formatLabels(labels)} ${formatValue(value)}`;
}

/** Throw unless `name` is a valid metric or label name; names are fixed in code, so this is a bug check. */
export function checkName(name: string): string {
  if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(name)) throw new Error(`invalid metric or label name ${JSON.stringify(name)}`);
  return name;
}
