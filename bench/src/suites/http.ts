import type { Figure, Suite } from "../figures.js";
import { JsonCaller } from "../http-json.js";
import { startServerProcess } from "../server-process.js";
import { nowMs, round } from "../stats.js";

interface Acquired {
  status: "acquired" | "timeout";
  token?: string;
}

/**
 * `http_pairs_per_s_c64`: 64 concurrent connections from this process to a lock server in a child
 * process, each doing lock then (awaited) unlock on keys of its own, for a fixed time.
 */
export const httpSuite: Suite = {
  name: "http",
  description: "lock+unlock pairs per second over loopback HTTP, 64 connections, server in a separate process",
  async run(ctx) {
    const server = await startServerProcess();
    const callers = 64;
    const caller = new JsonCaller(server.url, callers);
    const ns = "bench-http";
    try {
      const runFor = async (ms: number): Promise<number> => {
        let pairs = 0;
        const end = nowMs() + ms;
        await Promise.all(
          Array.from({ length: callers }, async (_, i) => {
            let n = 0;
            while (nowMs() < end) {
              const res = await caller.post<Acquired>(`/v1/namespaces/${ns}/lock`, {
                locks: [{ descriptor: `w${i}-k${n++ % 4}`, mode: "exclusive" }],
              });
              if (res.status !== "acquired" || !res.token) throw new Error("uncontended lock was not granted");
              await caller.post(`/v1/namespaces/${ns}/unlock`, { tokens: [res.token] });
              pairs++;
            }
          }),
        );
        return pairs;
      };
      await runFor(ctx.quick ? 500 : 2000);
      const ms = ctx.quick ? 3000 : 10_000;
      const start = nowMs();
      const pairs = await runFor(ms);
      const rate = pairs / ((nowMs() - start) / 1000);
      ctx.progress(`http: ${Math.round(rate)} pairs/s at 64 connections`);
      const figures: Figure[] = [
        {
          name: "http_pairs_per_s_c64",
          value: round(rate, 0),
          unit: "pairs/s",
          command: ctx.command,
          quick: ctx.quick,
          note: `64 connections, lock+unlock on 4 own keys each, ${ms / 1000} s after warm-up`,
        },
      ];
      return figures;
    } finally {
      await caller.close();
      await server.stop();
    }
  },
};
