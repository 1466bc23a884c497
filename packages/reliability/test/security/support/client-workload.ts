import { Writable } from "node:stream";
import { LockClient } from "@leasehold/client";
import { pino } from "pino";
import { expect } from "vitest";
import type { Harness } from "./harness.js";

/** Check name in the report. */
export const CLIENT_CHECK = "LockClient workload with valid tokens";

/** The clients of the run, the lock `billing` keeps held for the refused-credentials test, and what the clients logged. */
export interface Workload {
  readonly clients: readonly LockClient[];
  /** Holds {@link Workload.heldDescriptor} in `billing` (its refresher keeps it) until closed. */
  readonly holder: LockClient;
  readonly heldDescriptor: string;
  readonly heldToken: string;
  /** Every line the clients logged (pino at debug). */
  readonly logs: string[];
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Three `LockClient.http` clients with bearer tokens (`billing` and `orders` with their namespace's
 * token, `ops` with the `"*"` token and lock batching on) run `iterations` rounds of lock, unlock,
 * tryUnlock, withLock, timestamps and transactions, one client per round, paced to stay far below
 * the per-address rate limit (they all connect from 127.0.0.1). Every call must succeed; every
 * token received is kept for the log scan. The `billing` client then keeps one lock held.
 */
export async function runClientWorkload(h: Harness, iterations: number): Promise<Workload> {
  const logs: string[] = [];
  const logger = pino(
    { level: "debug" },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        logs.push(chunk.toString("utf8"));
        done();
      },
    }),
  );
  const client = (namespace: string, token: string, lockBatching: boolean): LockClient =>
    LockClient.http({ baseUrl: h.server.url, namespace, headers: { authorization: `Bearer ${token}` }, logger, lockBatching });
  const billing = client("billing", h.secrets.billing, false);
  const orders = client("orders", h.secrets.orders, false);
  const ops = client("ops", h.secrets.admin, true);
  const clients = [billing, orders, ops];
  const count = (outcome: string): void => h.tally.record(CLIENT_CHECK, outcome, 1, 0);

  for (let i = 0; i < iterations; i++) {
    const c = clients[i % clients.length] as LockClient;
    const lock = await c.lock([{ descriptor: `work-${i}`, mode: "exclusive" }], { acquireTimeoutMs: 1_000 });
    count(`lock: ${lock.status}`);
    expect(lock.status).toBe("acquired");
    if (lock.status !== "acquired") continue;
    h.received.add(lock.token);
    if (i % 2 === 0) {
      const unlocked = await c.unlock([lock.token]);
      count("unlock: released");
      expect(unlocked).toEqual([lock.token]);
    } else {
      c.tryUnlock([lock.token]);
      count("tryUnlock: queued");
    }
    const done = await c.withLock([{ descriptor: `with-${i}`, mode: "shared" }], { acquireTimeoutMs: 1_000 }, (_signal, held) => {
      h.received.add(held.token);
      return held.acquired.length;
    });
    count(`withLock: ${done.status}`);
    expect(done.status).toBe("acquired");
    const timestamp = await c.freshTimestamp();
    count("freshTimestamp: served");
    expect(timestamp).toBeGreaterThan(0);
    const txn = await c.startTransaction();
    count("startTransaction: served");
    h.received.add(txn.token);
    c.tryUnlock([txn.token]);
    await sleep(300);
  }

  const heldDescriptor = "ledger";
  const held = await billing.lock([{ descriptor: heldDescriptor, mode: "exclusive" }]);
  count(`lock (kept held): ${held.status}`);
  expect(held.status).toBe("acquired");
  if (held.status !== "acquired") throw new Error("the billing lock was not acquired");
  h.received.add(held.token);
  // Every tryUnlock has landed: only the kept lock is still held.
  await h.waitForSample(CLIENT_CHECK, "leasehold_held_tokens", 1);
  return { clients, holder: billing, heldDescriptor, heldToken: held.token, logs };
}
