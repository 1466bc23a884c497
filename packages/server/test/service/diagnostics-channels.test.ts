import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { afterEach, describe, expect, it, vi } from "vitest";
import { SERVER_CHANNELS, type ServerLeaseLapseMessage, type ServerLockGrantMessage } from "../../src/index.js";
import { serverMessages } from "../../src/service/server-diagnostics.js";
import { startServer } from "../../src/start-server.js";
import { tokenFingerprint } from "../../src/engine/token-fingerprint.js";
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
    // Long enough that the first token cannot lapse before the test unlocks it, even on a loaded machine.
    const server = await startServer({ leaseMs: 1_500 });
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
    // It names the lapsed token by the same fingerprint as its grant, never by the token.
    expect(lapses).toEqual([{ namespace: "diag", descriptorCount: 1, tokenFingerprint: tokenFingerprint(second.token as string) }]);
    expect(JSON.stringify(lapses)).not.toContain(second.token as string);
  });

  it("lock:grant for a lock-batch entry, and none for an entry that timed out", async () => {
    const server = await startServer();
    cleanups.push(() => server.close());
    const { grants } = record();
    const res = await fetch(`${server.url}/v1/namespaces/diag/lock-batch`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ requests: [{ requestId: "b0", locks: [{ descriptor: "x", mode: "exclusive" }] }, { locks: [{ descriptor: "x", mode: "exclusive" }], acquireTimeoutMs: 50 }] }),
    });
    const lines = (await res.text()).trim().split("\n").map((l) => JSON.parse(l) as { index: number; result: { status: string; token?: string } });
    const granted = lines.find((l) => l.index === 0)?.result;
    expect(lines.find((l) => l.index === 1)?.result.status).toBe("timeout");
    expect(grants).toEqual([{ namespace: "diag", requestId: "b0", tokenFingerprint: tokenFingerprint(granted?.token as string), acquired: expect.any(Array), waited: false }]);
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
    // With subscribers the same flow builds grant and lapse messages: the spies do see the builders.
    const [grant, lapse] = spies;
    expect(grant?.mock.calls.length).toBeGreaterThanOrEqual(2);
    expect(lapse?.mock.calls.length).toBeGreaterThanOrEqual(1);
  });
});
