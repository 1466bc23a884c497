/** The server-side counters a run is cross-checked against, read from `GET /metrics`. */
export interface ServerCounters {
  /** `leasehold_grants_total`: descriptor grants. */
  readonly grants: number;
  /** `leasehold_lease_lapses_total`: tokens released because nothing refreshed them. */
  readonly lapses: number;
  /** `leasehold_abandoned_total`: waiting requests abandoned because the client went away. */
  readonly abandoned: number;
  /** `leasehold_requests_total` by operation (every status): `lock`, `lock-batch`, `refresh`, `unlock`, … */
  readonly requests: Readonly<Record<string, number>>;
}

/** Read the counters from the server's Prometheus text. */
export async function readServerCounters(baseUrl: string): Promise<ServerCounters> {
  const text = await (await fetch(new URL("/metrics", baseUrl))).text();
  const value = (name: string): number => {
    const line = text.split("\n").find((l) => l.startsWith(`${name} `));
    return line === undefined ? 0 : Number(line.slice(name.length + 1));
  };
  const requests: Record<string, number> = {};
  for (const m of text.matchAll(/^leasehold_requests_total\{operation="([^"]+)",status="[^"]*"\} (\d+)$/gm)) {
    const [, operation = "", count = "0"] = m;
    requests[operation] = (requests[operation] ?? 0) + Number(count);
  }
  return { grants: value("leasehold_grants_total"), lapses: value("leasehold_lease_lapses_total"), abandoned: value("leasehold_abandoned_total"), requests };
}

/** What changed between two readings (the server is shared by the runs, one after the other). */
export function counterDelta(before: ServerCounters, after: ServerCounters): ServerCounters {
  const requests: Record<string, number> = {};
  for (const [op, n] of Object.entries(after.requests)) requests[op] = n - (before.requests[op] ?? 0);
  return {
    grants: after.grants - before.grants,
    lapses: after.lapses - before.lapses,
    abandoned: after.abandoned - before.abandoned,
    requests,
  };
}
