import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";

/**
 * The proxies' own program (plain CommonJS, run with `node -e`): `PROXY_COUNT` listeners in front
 * of 127.0.0.1:`PROXY_TARGET`; each line on stdin sets the one-way latency in ms for every chunk
 * of every connection, old and new (a fixed delay keeps order), answered with a line.
 */
const PROGRAM = `
const net = require("node:net");
let latency = 0;
const target = Number(process.env.PROXY_TARGET);
const count = Number(process.env.PROXY_COUNT);
const ports = [];
let ready = 0;
for (let i = 0; i < count; i++) {
  const server = net.createServer((client) => {
    const upstream = net.connect(target, "127.0.0.1");
    const forward = (from, to) => from.on("data", (chunk) => (latency > 0 ? setTimeout(() => to.write(chunk), latency) : to.write(chunk)));
    forward(client, upstream);
    forward(upstream, client);
    for (const s of [client, upstream]) s.on("error", () => undefined);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  server.listen(0, "127.0.0.1", () => {
    ports[i] = server.address().port;
    if (++ready === count) console.log(JSON.stringify({ ports }));
  });
}
require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
  latency = Number(line);
  console.log(JSON.stringify({ latency }));
});
`;

/** TCP proxies to PostgreSQL in a process of their own, so a busy test process never slows them. */
export interface LatencyProxies {
  /** One listening port per proxy. */
  readonly ports: readonly number[];
  /** Hold every chunk `ms` in each direction from now on (a statement's round trip grows by `2 × ms`). */
  setLatency(ms: number): Promise<void>;
  close(): Promise<void>;
}

/** Start `count` proxies in front of PostgreSQL at 127.0.0.1:`targetPort`. */
export async function startLatencyProxies(count: number, targetPort = 5432): Promise<LatencyProxies> {
  const child: ChildProcess = spawn(process.execPath, ["-e", PROGRAM], {
    stdio: ["pipe", "pipe", "inherit"],
    env: { ...process.env, PROXY_TARGET: String(targetPort), PROXY_COUNT: String(count) },
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const waiting: ((line: Record<string, unknown>) => void)[] = [];
  createInterface({ input: child.stdout! }).on("line", (line) => waiting.shift()?.(JSON.parse(line) as Record<string, unknown>));
  const next = (): Promise<Record<string, unknown>> => new Promise((resolve) => waiting.push(resolve));
  const first = await Promise.race([next(), exited.then(() => null)]);
  if (first === null) throw new Error("the proxy process exited before listening");
  return {
    ports: first.ports as number[],
    async setLatency(ms) {
      const answer = next();
      child.stdin!.write(`${ms}\n`);
      await answer;
    },
    async close() {
      child.kill("SIGKILL");
      await exited;
    },
  };
}
