/** One group of bars (for example one concurrency level), one bar per series. */
export interface BarGroup {
  readonly label: string;
  /** Values in the order of the chart's series; a missing value leaves a gap. */
  readonly values: readonly (number | undefined)[];
}

const escape = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const COLORS = ["#c0504d", "#3b6ea8", "#9bbb59", "#8064a2"] as const;

/**
 * A self-contained SVG horizontal grouped bar chart: one block per group, one colored bar per
 * series, with a legend. Each group is scaled on its own when `scalePerGroup` is set, because
 * latencies at 1 and at 64 concurrent transactions differ by an order of magnitude and one shared
 * axis would flatten the small ones; the value is always printed next to the bar.
 */
export function groupedBarChart(
  title: string,
  unit: string,
  series: readonly string[],
  groups: readonly BarGroup[],
  options: { readonly scalePerGroup?: boolean } = {},
): string {
  const width = 760;
  const labelWidth = 120;
  const barHeight = 20;
  const top = 60;
  const groupHeight = series.length * (barHeight + 4) + 18;
  const height = top + groups.length * groupHeight + 10;
  const globalMax = Math.max(1e-9, ...groups.flatMap((g) => g.values.map((v) => v ?? 0)));
  const legend = series
    .map((name, i) => `<rect x="${12 + i * 140}" y="34" width="14" height="14" fill="${COLORS[i % COLORS.length]}"/><text x="${32 + i * 140}" y="46" font-size="13">${escape(name)}</text>`)
    .join("");
  const blocks = groups
    .map((group, g) => {
      const y0 = top + g * groupHeight;
      const max = options.scalePerGroup ? Math.max(1e-9, ...group.values.map((v) => v ?? 0)) : globalMax;
      const scale = (width - labelWidth - 140) / max;
      const bars = group.values.map((value, i) => {
        if (value === undefined) return "";
        const y = y0 + i * (barHeight + 4);
        const w = Math.max(1, value * scale);
        return (
          `<rect x="${labelWidth}" y="${y}" width="${w.toFixed(1)}" height="${barHeight}" fill="${COLORS[i % COLORS.length]}"/>` +
          `<text x="${(labelWidth + w + 6).toFixed(1)}" y="${y + 15}" font-size="12">${escape(value.toLocaleString("en-US"))} ${escape(unit)}</text>`
        );
      });
      const labelY = y0 + (series.length * (barHeight + 4)) / 2 + 4;
      return `<text x="${labelWidth - 8}" y="${labelY}" text-anchor="end" font-size="13">${escape(group.label)}</text>${bars.join("")}`;
    })
    .join("\n  ");
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif">
  <rect width="100%" height="100%" fill="white"/>
  <text x="12" y="22" font-size="16" font-weight="bold">${escape(title)}</text>
  ${legend}
  ${blocks}
</svg>
`;
}
