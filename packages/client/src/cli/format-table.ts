/**
 * Lay out rows as aligned columns under a header, as `ps` or `kubectl get` do: every column as
 * wide as its widest cell, two spaces apart, trailing spaces trimmed.
 */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)].join("\n") + "\n";
}

/** A duration for people: `850ms`, `5.2s`, `3m12s`, `2h05m`. */
export function formatMs(ms: number | undefined): string {
  if (ms === undefined) return "-";
  if (ms < 1_000) return `${ms}ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)}s`;
  const s = Math.floor(ms / 1_000);
  if (s < 3_600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3_600)}h${String(Math.floor((s % 3_600) / 60)).padStart(2, "0")}m`;
}

/**
 * A descriptor or description made safe for one table cell: control characters (row and cell
 * descriptors join their parts with NUL) are shown as `\uXXXX` escapes, so a terminal never
 * interprets them and columns stay aligned.
 */
export function printable(text: string | undefined): string {
  if (text === undefined) return "-";
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
