import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { afterEach, describe, expect, it, vi } from "vitest";
import { SERVER_CHANNELS, type ServerLeaseLapseMessage, type ServerLockGrantMessage } from "../../src/index.js";
import { serverMessages } from "../../src/service/server-diagnostics.js";
import { startServer } from "../../src/start-server.js";
import { tokenFingerprint } from "../../src/token-fingerprint.js";
import { waitFor } from "../support/wait-for.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  vi.restoreAllMocks();
});

function record() {
  const grants: ServerLockGrantMessage[] = [];
  const lapses: ServerLeaseLapseMessage[] = [];
  const onGrant = (m: unknown): void => void grants.push(m as ServerLockGrantMessage);
  const onLapse = (m: unknown): void => void lapses.push(m as ServerLeaseLapseMessage);
  subscribe(SERVER_CHANNELS.lockGrant, onGrant);
  subscribe(SERVER_CHANNELS.leaseLapse, onLapse);
  cleanups.push(() => unsubscribe(SERVER_CHANNELS.lockGrant, onGrant), () => unsubscribe(SERVER_CHANNELS.leaseLapse, onLapse));
  return { grants, lapses };
}

async function post(url: string, op: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${url}/v1/namespaces/diag/${op}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

describe("server diagnostics channels, over HTTP", () => {
  it("lock:grant for a grant at once and for a grant after a wait; lease:lapse for a token nobody refreshed", async () => {
    const server = await startServer({ leaseMs: 300 });
    cleanups.push(() => server.close());
    const { grants, lapses } = record();

    const first = await post(server.url, "lock", { requestId: "r1", locks: [{ descriptor: "d", mode: "exclusive" }, { descriptor: "e", mode: "shared" }] });
    expect(grants).toEqual([{ namespace: "diag", requestId: "r1", tokenFingerprint: tokenFingerprint(first.token as string), acquired: first.acquired, waited: false }]);
    expect(JSON.stringify(grants)).not.toContain(first.token as string);

    const waiting = post(server.url, "lock", { locks: [{ descriptor: "d", mode: "exclusive" }], acquireTimeoutMs: 5_000 });
    await waitFor(() => server.service.metrics().waitingRequests === 1, "a waiting request");
    await post(server.url, "unlock", { tokens: [first.token] });
    const second = await waiting;
    expect(grants[1]).toEqual({ namespace: "diag", tokenFingerprint: tokenFingerprint(second.token as string), acquired: second.acquired, waited: true });
    expect(grants[1]).not.toHaveProperty("requestId");

    // Nobody refreshes the second token: it lapses after leaseMs.
    await waitFor(() => lapses.length === 1, "a lapse");
    expect(lapses).toEqual([{ namespace: "diag", descriptorCount: 1 }]);
  });

  it("builds no message when nobody subscribes", async () => {
    const spies = (Object.keys(serverMessages) as (keyof typeof serverMessages)[]).map((name) => vi.spyOn(serverMessages, name));
    const built = (): number => spies.reduce((sum, spy) => sum + spy.mock.calls.length, 0);
    const server = await startServer({ leaseMs: 200 });
    cleanups.push(() => server.close());
    const flow = async (): Promise<void> => {
      const held = await post(server.url, "lock", { locks: [{ descriptor: "n", mode: "exclusive" }] });
      const waiting = post(server.url, "lock", { locks: [{ descriptor: "n", mode: "exclusive" }], acquireTimeoutMs: 5_000 });
      await waitFor(() => server.service.metrics().waitingRequests === 1, "a waiting request");
      await post(server.url, "unlock", { tokens: [held.token] });
      await waiting;
      const lapsed = server.service.metrics().leaseLapsesTotal;
      await waitFor(() => server.service.metrics().leaseLapsesTotal > lapsed, "a lapse");
    };
    await flow();
    expect(built()).toBe(0);
    record();
    await flow();
    expect(built()).toBe(3);
  });
});
