import type { LockTableSnapshot, RunningServer, ServiceMetrics } from "@leasehold/server";

const JSON_HEADERS = { "content-type": "application/json" };

/** Everything observable about the lock table that bad input must leave alone. */
export interface ServerState {
  readonly snapshot: LockTableSnapshot;
  readonly metrics: ServiceMetrics;
}

/** The state of namespace `namespace` and the service's counters, right now. */
export function stateOf(server: RunningServer, namespace: string): ServerState {
  return { snapshot: server.service.snapshot(namespace), metrics: server.service.metrics() };
}

/** A namespace with real holders and queued waiters, and the means to clear it again. */
export interface SeededNamespace {
  readonly namespace: string;
  /** Release the holders and abandon the waiters (closing their connections); resolves once none wait. */
  clear(): Promise<void>;
}

async function waitUntil(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/**
 * Fill `namespace` with something to disturb: an exclusive holder (with a `requestId`), shared and
 * permit holders, a descriptor named `__proto__`, an immutable-timestamp lock, and three waiters
 * queued behind them (acquireTimeoutMs 60 s). Callers must `clear()` well within those 60 s,
 * otherwise the waiters time out on their own and the metrics move.
 */
export async function seedNamespace(server: RunningServer, namespace: string): Promise<SeededNamespace> {
  const path = (op: string): string => `/v1/namespaces/${namespace}/${op}`;
  const tokens: string[] = [];
  const post = (op: string, body: unknown, signal?: AbortSignal): Promise<Response> =>
    fetch(new URL(path(op), server.url), { method: "POST", headers: JSON_HEADERS, body: JSON.stringify(body), ...(signal && { signal }) });
  const take = async (body: unknown): Promise<void> => {
    const res = await post("lock", body);
    const text = await res.text();
    const answer = JSON.parse(text) as { status?: string; token?: string };
    if (res.status !== 200 || answer.status !== "acquired" || answer.token === undefined) throw new Error(`seeding failed: ${text}`);
    tokens.push(answer.token);
  };
  await take({ requestId: "seed-held", locks: [{ descriptor: "orders\u0000o-17", mode: "exclusive" }] });
  await take({ locks: [{ descriptor: "doc-3", mode: "shared" }, { descriptor: "__proto__", mode: "exclusive" }] });
  await take({ locks: [{ descriptor: "doc-3", mode: "shared" }] });
  await take({ locks: [{ descriptor: "job", mode: "permit", limit: 2 }] });
  await take({ locks: [{ descriptor: "job", mode: "permit", limit: 2 }] });
  const txn = (await (await post("transactions/start", { count: 2 })).json()) as { transactions: { token: string }[] };
  for (const t of txn.transactions) tokens.push(t.token);

  // Aborting a waiter's fetch closes its connection, and the server abandons the wait.
  const waiters = new AbortController();
  const waitBodies = [
    { locks: [{ descriptor: "orders\u0000o-17", mode: "shared" }], acquireTimeoutMs: 60_000 },
    { requestId: "seed-waiter", locks: [{ descriptor: "doc-3", mode: "exclusive" }], acquireTimeoutMs: 60_000 },
    { locks: [{ descriptor: "job", mode: "permit", limit: 2 }], acquireTimeoutMs: 60_000 },
  ];
  for (const body of waitBodies) post("lock", body, waiters.signal).catch(() => undefined);
  await waitUntil(() => server.service.snapshot(namespace).waitingRequests === waitBodies.length, "the seeded waiters to queue");

  return {
    namespace,
    async clear(): Promise<void> {
      waiters.abort();
      await waitUntil(() => server.service.snapshot(namespace).waitingRequests === 0, "the seeded waiters to leave");
      await (await post("unlock", { tokens })).text();
    },
  };
}
