/**
 * Child process of the 10,000-waiter scenario: it opens one connection per waiter and sends each
 * waiter as a one-entry `lock-batch` (a lock request whose 200 head the server sends once the entry
 * is started, i.e. queued), waiting for waiter i's head before sending waiter i + 1. The queue
 * order is therefore known exactly: it is the index. When a waiter is granted, the child unlocks it
 * at once (on one keep-alive connection), which lets the server grant the next one. Runs in its own
 * process so its event loop cannot distort the health probes of the test process.
 *
 * Usage: node waiter-flood-child.js '<WaiterFloodConfig JSON>'. Prints {@link WaiterFloodEvent} lines.
 */
import { Agent, request } from "node:http";
import type { WaiterFloodConfig, WaiterFloodEvent, WaiterOutcome } from "./waiter-flood-protocol.js";

const config = JSON.parse(process.argv[2] ?? "{}") as WaiterFloodConfig;
const base = `${config.baseUrl}/v1/namespaces/${encodeURIComponent(config.namespace)}`;
const unlockAgent = new Agent({ keepAlive: true, maxSockets: 1 });
const outcomes: WaiterOutcome[] = [];
let arrivals = 0;
let firstGrantAt = 0;
const releases: Promise<void>[] = [];

/** Write one event; resolves once it is handed to the pipe (a large line must not be cut by `exit`). */
function emit(event: WaiterFloodEvent): Promise<void> {
  return new Promise((resolve) => process.stdout.write(`${JSON.stringify(event)}\n`, () => resolve()));
}

function post(path: string, body: unknown, agent: Agent | false): Promise<{ status: number; text: string }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(`${base}/${path}`, {
      method: "POST",
      agent,
      headers: { "content-type": "application/json", "content-length": Buffer.byteLength(payload) },
    });
    req.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(payload);
  });
}

async function release(i: number, token: string): Promise<void> {
  try {
    const answer = await post("unlock", { tokens: [token] }, unlockAgent);
    const unlocked = answer.status === 200 && (JSON.parse(answer.text) as { unlocked: string[] }).unlocked.includes(token);
    if (!unlocked) outcomes[i] = { ...outcomes[i], i, error: `unlock answered ${answer.status}: the token was not held` };
  } catch (err) {
    outcomes[i] = { ...outcomes[i], i, error: `unlock failed: ${String(err)}` };
  }
}

function onLine(i: number, line: string): void {
  const parsed = JSON.parse(line) as { result?: { status: string; token?: string; acquired?: { fencingToken: number }[] }; error?: { code: string } };
  const result = parsed.result;
  if (result?.status === "acquired" && result.token !== undefined) {
    if (arrivals === 0) firstGrantAt = performance.now();
    outcomes[i] = { i, fencingToken: result.acquired?.[0]?.fencingToken ?? -1, arrival: arrivals++ };
    releases.push(release(i, result.token));
  } else {
    outcomes[i] = { i, error: parsed.error?.code ?? result?.status ?? "no result" };
  }
}

/** Send waiter i; resolves with `started` once the server answered its head, and `done` when its line is in. */
function sendWaiter(i: number): { started: Promise<boolean>; done: Promise<void> } {
  const payload = JSON.stringify({
    requests: [{ requestId: `waiter-${i}`, locks: [{ descriptor: config.descriptor, mode: "exclusive" }], acquireTimeoutMs: config.acquireTimeoutMs }],
  });
  let started!: (ok: boolean) => void;
  const startedP = new Promise<boolean>((r) => (started = r));
  const done = new Promise<void>((resolve) => {
    const req = request(`${base}/lock-batch`, {
      method: "POST",
      agent: false,
      headers: { "content-type": "application/json", "content-length": Buffer.byteLength(payload) },
    });
    req.on("response", (res) => {
      if (res.statusCode !== 200) {
        outcomes[i] = { i, error: `lock-batch answered ${res.statusCode}` };
        started(false);
        res.resume();
        res.on("end", resolve);
        return;
      }
      started(true);
      let buffered = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        buffered += chunk;
        let end = buffered.indexOf("\n");
        while (end >= 0) {
          onLine(i, buffered.slice(0, end));
          buffered = buffered.slice(end + 1);
          end = buffered.indexOf("\n");
        }
      });
      res.on("end", resolve);
      res.on("error", (err) => {
        outcomes[i] ??= { i, error: `response error: ${String(err)}` };
        resolve();
      });
    });
    req.on("error", (err) => {
      outcomes[i] ??= { i, error: `request error: ${String(err)}` };
      started(false);
      resolve();
    });
    req.end(payload);
  });
  return { started: startedP, done };
}

async function main(): Promise<void> {
  const began = performance.now();
  const done: Promise<void>[] = [];
  let refused = 0;
  for (let i = 0; i < config.count; i++) {
    const waiter = sendWaiter(i);
    done.push(waiter.done);
    if (!(await waiter.started)) refused++;
  }
  await emit({ event: "queued", count: config.count, ms: performance.now() - began, refused });
  await Promise.all(done);
  await Promise.all(releases);
  const drainMs = arrivals === 0 ? 0 : performance.now() - firstGrantAt;
  await emit({ event: "done", outcomes: Array.from({ length: config.count }, (_, i) => outcomes[i] ?? { i, error: "no outcome" }), drainMs });
  unlockAgent.destroy();
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`waiter-flood-child: ${String(err)}\n`);
    process.exit(1);
  },
);
