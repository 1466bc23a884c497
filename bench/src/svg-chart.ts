/** One bar of a horizontal bar chart. */
export interface Bar {
  readonly label: string;
  readonly value: number;
}

const escape = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** A self-contained SVG horizontal bar chart; no dependencies, readable on GitHub. */
export function barChart(title: string, unit: string, bars: readonly Bar[]): string {
  const width = 760;
  const labelWidth = 260;
  const barHeight = 26;
  const top = 40;
  const height = top + bars.length * (barHeight + 8) + 20;
  const max = Math.max(1, ...bars.map((b) => b.value));
  const scale = (width - labelWidth - 120) / max;
  const rows = bars
    .map((b, i) => {
      const y = top + i * (barHeight + 8);
      const w = Math.max(1, b.value * scale);
      return [
        `<text x="${labelWidth - 8}" y="${y + 18}" text-anchor="end" font-size="13">${escape(b.label)}</text>`,
        `<rect x="${labelWidth}" y="${y}" width="${w.toFixed(1)}" height="${barHeight}" fill="#3b6ea8"/>`,
        `<text x="${(labelWidth + w + 6).toFixed(1)}" y="${y + 18}" font-size="13">${escape(b.value.toLocaleString("en-US"))} ${escape(unit)}</text>`,
      ].join("");
    })
    .join("\n  ");
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif">
  <rect width="100%" height="100%" fill="white"/>
  <text x="12" y="24" font-size="16" font-weight="bold">${escape(title)}</text>
  ${rows}
</svg>
`;
}
