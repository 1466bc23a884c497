import { Agent, request } from "node:http";

/** One HTTP answer, with how long it took from sending to the last byte of the body. */
export interface TimedAnswer {
  /** HTTP status. */
  readonly status: number;
  /** The whole body as text. */
  readonly body: string;
  /** Milliseconds from `request()` to the end of the body (`performance.now`). */
  readonly ms: number;
}

/**
 * A GET on `url` through `agent` (pass a keep-alive agent with one socket to probe on a connection
 * of its own), timed. Rejects on network errors and after `timeoutMs`.
 */
export function timedGet(url: string, agent: Agent, timeoutMs = 10_000): Promise<TimedAnswer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "GET", agent, timeout: timeoutMs }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body, ms: performance.now() - started }));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`GET ${url}: no answer within ${timeoutMs} ms`)));
    req.on("error", reject);
    req.end();
  });
}

/** A keep-alive agent with a single socket: probes then measure the server, not connection setup. */
export function probeAgent(): Agent {
  return new Agent({ keepAlive: true, maxSockets: 1 });
}

/**
 * The unlabelled samples of the server's `GET /metrics` (gauges and counters such as
 * `leasehold_waiting_requests`), by metric name.
 */
export async function readMetrics(baseUrl: string, agent: Agent): Promise<Map<string, number>> {
  const answer = await timedGet(`${baseUrl}/metrics`, agent);
  if (answer.status !== 200) throw new Error(`GET /metrics answered ${answer.status}`);
  const values = new Map<string, number>();
  for (const line of answer.body.split("\n")) {
    const match = /^([a-z_]+) (\S+)$/.exec(line);
    if (match?.[1] !== undefined && match[2] !== undefined) values.set(match[1], Number(match[2]));
  }
  return values;
}

/** Poll `/metrics` until `done(values)` holds; resolves true, or false after `timeoutMs`. */
export async function waitForMetrics(
  baseUrl: string,
  agent: Agent,
  done: (values: Map<string, number>) => boolean,
  timeoutMs: number,
  everyMs = 20,
): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (done(await readMetrics(baseUrl, agent))) return true;
    if (performance.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
