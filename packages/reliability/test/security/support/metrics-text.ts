/** The value of an unlabelled sample `name` in Prometheus text, or NaN when it is absent. */
export function sample(text: string, name: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return line === undefined ? Number.NaN : Number(line.slice(name.length + 1));
}

/** The lock table's gauges and counters that a refused request must leave alone. */
export const LOCK_STATE_SAMPLES = [
  "leasehold_held_locks",
  "leasehold_held_tokens",
  "leasehold_waiting_requests",
  "leasehold_namespaces",
  "leasehold_grants_total",
  "leasehold_timeouts_total",
  "leasehold_lease_lapses_total",
  "leasehold_unlocks_total",
  "leasehold_abandoned_total",
] as const;

/** {@link LOCK_STATE_SAMPLES} read from one scrape of `/metrics`. */
export function lockState(text: string): Record<(typeof LOCK_STATE_SAMPLES)[number], number> {
  return Object.fromEntries(LOCK_STATE_SAMPLES.map((name) => [name, sample(text, name)])) as Record<(typeof LOCK_STATE_SAMPLES)[number], number>;
}
