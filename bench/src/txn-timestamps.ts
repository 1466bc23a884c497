import { LockClient } from "@leasehold/client";
import { silentLogger } from "./silent-logger.js";
import { nowMs } from "./stats.js";

/**
 * Fresh timestamps per second from `callers` concurrent callers of `freshTimestamp()` on one
 * client for `ms`: the autobatcher sends one `timestamps` call at a time for everyone waiting.
 * Every value is checked to be above the caller's previous one.
 */
export async function measureTimestamps(baseUrl: string, callers: number, ms: number): Promise<{ perSecond: number; calls: number }> {
  const client = LockClient.http({ baseUrl, namespace: `bench-ts-${callers}`, logger: silentLogger() });
  try {
    const run = async (duration: number): Promise<number> => {
      let count = 0;
      const end = nowMs() + duration;
      await Promise.all(
        Array.from({ length: callers }, async () => {
          let last = 0;
          while (nowMs() < end) {
            const t = await client.freshTimestamp();
            if (t <= last) throw new Error(`timestamp went backwards: ${t} after ${last}`);
            last = t;
            count++;
          }
        }),
      );
      return count;
    };
    await run(Math.min(300, ms / 3));
    const start = nowMs();
    const calls = await run(ms);
    return { perSecond: calls / ((nowMs() - start) / 1000), calls };
  } finally {
    await client.close();
  }
}
