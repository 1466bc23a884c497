/** The parts of a V8 `.cpuprofile` (as written by `node --cpu-prof`) that self time needs. */
export interface CpuProfile {
  readonly nodes: ReadonlyArray<{
    readonly id: number;
    readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
    readonly hitCount?: number | undefined;
  }>;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** One function's share of the samples. */
export interface Frame {
  /** `name (file:line)`, with the path shortened to the package-relative part. */
  readonly frame: string;
  /** Percent of all samples (idle included) spent in this function itself. */
  readonly selfPercent: number;
}

/** Shorten a script URL to what identifies it: `server/dist/http/x.js`, `node:internal/...`, `undici/lib/...`. */
function shortUrl(url: string): string {
  if (url === "") return "";
  const pkg = /packages\/([^/]+\/dist\/.*)$/.exec(url);
  if (pkg) return pkg[1]!;
  const nm = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?(.*)$/.exec(url);
  if (nm) return nm[1]!;
  return url.replace(/^file:\/\//, "");
}

/**
 * The `limit` functions with the most self time, aggregated by name and location. `(idle)` and
 * `(program)` stay in the ranking: idle time is what is left on the table, which is the point.
 */
export function topFrames(profile: CpuProfile, limit: number): Frame[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const counts = new Map<string, number>();
  for (const id of profile.samples) {
    const node = byId.get(id);
    if (node === undefined) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const where = shortUrl(url);
    const key = `${functionName || "(anonymous)"}${where ? ` (${where}:${lineNumber + 1})` : ""}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const total = profile.samples.length || 1;
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([frame, n]) => ({ frame, selfPercent: (100 * n) / total }));
}

/** The area a script belongs to, for {@link byArea}: a leasehold package's directory, a dependency, or Node's own code. */
function areaOf(functionName: string, url: string): string {
  if (url === "") return functionName.startsWith("(") ? functionName : "(native)";
  const pkg = /packages\/([^/]+)\/dist\/(?:([^/]+)\/)?/.exec(url);
  if (pkg) return `${pkg[1]}${pkg[2] !== undefined && !pkg[2].endsWith(".js") ? `/${pkg[2]}` : ""}`;
  const nm = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1]!;
  const internal = /^node:internal\/(?:(streams|http|http2|util|process|timers|perf|fs)\b|([^/]+))/.exec(url);
  if (internal) return `node:${internal[1] ?? internal[2]}`;
  return url.startsWith("node:") ? url : "(other)";
}

/**
 * Self time grouped by area (`server/http`, `server/engine`, `undici`, `node:_http_server`,
 * `(idle)`, `(garbage collector)`, …), as percent of all samples, largest first.
 */
export function byArea(profile: CpuProfile): { area: string; percent: number }[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const counts = new Map<string, number>();
  for (const id of profile.samples) {
    const node = byId.get(id);
    if (node === undefined) continue;
    const area = areaOf(node.callFrame.functionName, node.callFrame.url);
    counts.set(area, (counts.get(area) ?? 0) + 1);
  }
  const total = profile.samples.length || 1;
  return [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([area, n]) => ({ area, percent: (100 * n) / total }));
}
