import { Redis } from "ioredis";
import Redlock from "redlock";
import { nowNs } from "../stats.js";
import type { PeerDriver } from "./peer.js";

/** The Redis the peer benchmarks use. */
export const REDIS = { host: "127.0.0.1", port: 6379 } as const;

/** Lock lease in Redis; far longer than any pair, so no lock lapses mid-pair. */
const TTL_MS = 10_000;

/** A redlock peer and the connection to close when the suite ends. */
export interface RedlockPeer {
  readonly driver: PeerDriver;
  close(): Promise<void>;
}

/**
 * redlock 4.2.0 over one ioredis connection to one Redis (quorum of one). A pair is redlock's
 * `lock` (a `SET NX PX` script) then an awaited `unlock` (a compare-and-delete script): two
 * round-trips. redlock has no wait queue: a taken key is retried after `retryDelay` ± jitter.
 * The defaults (200 ms ± 100 ms, 10 tries) would make the contended figure mostly sleep, so the
 * benchmark retries every 10 ms ± 5 ms, for ever: kinder to redlock than its defaults.
 * Throws when Redis cannot be reached within 2 s.
 */
export async function openRedlockPeer(): Promise<RedlockPeer> {
  const redis = new Redis({ ...REDIS, lazyConnect: true, connectTimeout: 2_000, maxRetriesPerRequest: 1, retryStrategy: () => null });
  redis.on("error", () => undefined); // reported through connect() / the commands instead
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    redis.disconnect();
    throw err;
  }
  const redlock = new Redlock([redis], { retryCount: -1, retryDelay: 10, retryJitter: 5 });
  const driver: PeerDriver = {
    name: "redlock",
    async session() {
      return {
        async pair(key) {
          const lock = await redlock.lock(`leasehold-bench:k${key}`, TTL_MS);
          const granted = nowNs();
          await lock.unlock();
          return granted;
        },
        async end() {},
      };
    },
  };
  return {
    driver,
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
