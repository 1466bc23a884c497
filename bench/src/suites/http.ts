import type { Figure, Suite } from "../figures.js";
import { RawHttpConnection } from "../raw-http-connection.js";
import { startServerProcess } from "../server-process.js";
import { nowMs, round } from "../stats.js";

const TOKEN = /"token":"([^"]+)"/;

/**
 * `http_pairs_per_s_c64`: 64 keep-alive connections from this process to a lock server in a child
 * process, each doing lock then (awaited) unlock on keys of its own, for a fixed time. The load
 * comes from a minimal HTTP/1.1 generator so that the figure is the server's, not the generator's.
 */
export const httpSuite: Suite = {
  name: "http",
  description: "lock+unlock pairs per second over loopback HTTP, 64 connections, server in a separate process",
  async run(ctx) {
    const server = await startServerProcess();
    const connections = await Promise.all(Array.from({ length: 64 }, () => RawHttpConnection.open(server.url)));
    const ns = "bench-http";
    try {
      const runFor = async (ms: number): Promise<number> => {
        let pairs = 0;
        const end = nowMs() + ms;
        await Promise.all(
          connections.map(async (conn, i) => {
            let n = 0;
            while (nowMs() < end) {
              const res = await conn.post(`/v1/namespaces/${ns}/lock`, `{"locks":[{"descriptor":"w${i}-k${n++ % 4}","mode":"exclusive"}]}`);
              const token = TOKEN.exec(res.body)?.[1];
              if (res.status !== 200 || !token) throw new Error(`uncontended lock was not granted: ${res.status} ${res.body}`);
              const un = await conn.post(`/v1/namespaces/${ns}/unlock`, `{"tokens":["${token}"]}`);
              if (un.status !== 200 || !un.body.includes(token)) throw new Error(`unlock failed: ${un.status} ${un.body}`);
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
          note: `64 keep-alive connections (minimal HTTP/1.1 generator), lock+unlock on 4 own keys each, ${ms / 1000} s after warm-up`,
        },
      ];
      return figures;
    } finally {
      for (const c of connections) c.close();
      await server.stop();
    }
  },
};
