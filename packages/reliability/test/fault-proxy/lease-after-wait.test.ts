import { LockClient, type LostLock } from "@leasehold/client";
import { startServer } from "@leasehold/server";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { startFaultProxy } from "../../src/fault-proxy/fault-proxy.js";

const LEASE_MS = 2_000; // validForMs 1,000: the refresher renews every 500 ms, withLock aborts 200 ms before the end
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

describe("2b. Faults: a lock granted after a long wait, over a slow link", () => {
  /*
   * Regression test of a client bug this section's load run found (its lost-lock figures: dozens of
   * `lease-expired` with hardly any failed refresh), found and fixed first through section 1 (commit
   * ff51402): LockClient measured a grant's lease from before the lock request was sent, so a grant
   * that waited in the server's queue for validForMs or longer came back already "lapsed": isHeld()
   * false, withLock aborting its work at once, and the refresher dropping the token as lease-expired
   * on its next tick without ever renewing it, so the server let it lapse one lease later although
   * nothing had failed. The client now renews such a grant once on arrival.
   */
  it(
    "stays held and is never reported lost while the client keeps it and the (slow) network works",
    async () => {
      const server = await startServer({ leaseMs: LEASE_MS });
      cleanups.push(() => server.close());
      // A slow link, no failures: every chunk each way is held 20-60 ms.
      const proxy = await startFaultProxy({
        target: { port: Number(new URL(server.url).port) },
        seed: 7,
        toServer: { delay: 1 },
        toClient: { delay: 1 },
        delayMs: { min: 20, max: 60 },
      });
      cleanups.push(() => proxy.close());
      const logger = pino({ level: "silent" });
      const holder = LockClient.http({ baseUrl: proxy.url, namespace: "slow-link", logger });
      const waiter = LockClient.http({ baseUrl: proxy.url, namespace: "slow-link", logger });
      cleanups.push(() => holder.close(), () => waiter.close());
      const lost: LostLock[] = [];
      waiter.lostLocks.subscribe((l) => lost.push(l));

      const first = await holder.lock([{ descriptor: "report", mode: "exclusive" }]);
      expect(first.status).toBe("acquired");
      if (first.status !== "acquired") return;
      // Released well after validForMs, so the waiter's grant comes after a wait longer than its lease.
      setTimeout(() => void holder.unlock([first.token]), 1_400);

      const result = await waiter.withLock([{ descriptor: "report", mode: "exclusive" }], { acquireTimeoutMs: 5_000 }, async (signal, lock) => {
        const heldAtStart = waiter.isHeld(lock.token);
        // Two full leases of work: the refresher must keep the lock alive all along.
        await sleep(2 * LEASE_MS);
        const fence = lock.acquired[0]?.fencingToken;
        const serverHolds = server.service.snapshot("slow-link").descriptors.some((d) => d.holders.some((h) => h.fencingToken === fence));
        return { heldAtStart, abortedDuringWork: signal.aborted, serverHolds, lostDuringWork: lost.filter((l) => l.token === lock.token) };
      });

      expect(result.status).toBe("acquired");
      if (result.status !== "acquired") return;
      expect(result.value.heldAtStart).toBe(true);
      expect(result.value.lostDuringWork).toEqual([]);
      expect(result.value.abortedDuringWork).toBe(false);
      expect(result.value.serverHolds).toBe(true);
    },
    20_000,
  );
});
