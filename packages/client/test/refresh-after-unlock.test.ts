import { afterEach, describe, expect, it } from "vitest";
import { LockClient } from "../src/index.js";
import { captureLogger } from "./support/capture-logger.js";
import { FakeLockService } from "./support/fake-lock-service.js";

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const clients: LockClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

async function lockToken(client: LockClient, descriptor: string): Promise<string> {
  const answer = await client.lock([{ descriptor, mode: "exclusive" }]);
  if (answer.status !== "acquired") throw new Error("not acquired");
  return answer.token;
}

/**
 * Two held tokens and a refresher renewal queued in the refresh autobatcher with both of them:
 * an explicit refresh whose call hangs occupies the single flight, and the refresher's renewal,
 * due 40 ms after the grants, waits behind it.
 */
async function renewalQueuedBehindAHangingRefresh() {
  const service = new FakeLockService();
  const client = LockClient.embedded(service, { namespace: "ns", logger: captureLogger().logger, refreshIntervalMs: 40, refreshTickMs: 10 });
  clients.push(client);
  const kept = await lockToken(client, "kept");
  const dropped = await lockToken(client, "dropped");
  service.refreshBehavior = "hang";
  const explicit = client.refresh([kept]).catch(() => undefined);
  await sleep(150);
  expect(service.refreshCalls).toHaveLength(1);
  /** Let the hanging call end and the queued renewal go; the refresh calls sent from now on. */
  const release = async (): Promise<string[][]> => {
    const callsBefore = service.refreshCalls.length;
    service.refreshBehavior = "ok";
    service.releaseHangs();
    await explicit;
    while (service.refreshCalls.length < callsBefore + 2) await sleep(10);
    return service.refreshCalls.slice(callsBefore);
  };
  return { client, kept, dropped, release };
}

describe("a token given to unlock or tryUnlock is never refreshed again", () => {
  it("tryUnlock: isHeld is false at once, and no refresh sent afterwards carries it, even one queued before", async () => {
    const { client, kept, dropped, release } = await renewalQueuedBehindAHangingRefresh();
    client.tryUnlock([dropped]);
    expect(client.isHeld(dropped)).toBe(false);
    expect(client.isHeld(kept)).toBe(true);
    const sent = await release();
    for (const call of sent) expect(call).not.toContain(dropped);
    expect(sent[0]).toContain(kept);
    expect(client.isHeld(kept)).toBe(true);
  });

  it("awaited unlock: the same", async () => {
    const { client, dropped, release } = await renewalQueuedBehindAHangingRefresh();
    const unlocked = client.unlock([dropped]);
    expect(client.isHeld(dropped)).toBe(false);
    const sent = await release();
    expect(await unlocked).toEqual([dropped]);
    for (const call of sent) expect(call).not.toContain(dropped);
  });
});
