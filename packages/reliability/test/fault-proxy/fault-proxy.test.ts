import { once } from "node:events";
import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { FaultRates } from "../../src/fault-proxy/fault-kinds.js";
import { startFaultProxy, type FaultProxy, type FaultProxyOptions } from "../../src/fault-proxy/fault-proxy.js";

/** What one side of a connection saw. */
interface Seen {
  data: Buffer;
  /** ms (performance.now) of each 'data' event. */
  times: number[];
  ended: boolean;
  errorCode: string | undefined;
  closedAt: number | undefined;
}

function watch(socket: Socket): Seen {
  const seen: Seen = { data: Buffer.alloc(0), times: [], ended: false, errorCode: undefined, closedAt: undefined };
  socket.on("data", (d: Buffer) => {
    seen.data = Buffer.concat([seen.data, d]);
    seen.times.push(performance.now());
  });
  socket.on("end", () => (seen.ended = true));
  socket.on("error", (err: NodeJS.ErrnoException) => (seen.errorCode = err.code));
  socket.on("close", () => (seen.closedAt = performance.now()));
  return seen;
}

/** A TCP server that echoes (or not) and records what each connection saw. */
async function startTarget(echo: boolean): Promise<{ server: Server; port: number; seen: Seen[]; sockets: Socket[] }> {
  const seen: Seen[] = [];
  const sockets: Socket[] = [];
  const server = createServer((s) => {
    sockets.push(s);
    seen.push(watch(s));
    if (echo) s.on("data", (d: Buffer) => s.write(d));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { server, port: (server.address() as AddressInfo).port, seen, sockets };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(condition: () => boolean, ms = 2_000): Promise<void> {
  const end = performance.now() + ms;
  while (!condition()) {
    if (performance.now() > end) throw new Error("condition not met in time");
    await sleep(5);
  }
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function setup(
  faults: { toServer?: FaultRates; toClient?: FaultRates },
  echo = true,
  extra: Partial<FaultProxyOptions> = {},
): Promise<{ proxy: FaultProxy; target: Awaited<ReturnType<typeof startTarget>>; client: Socket; clientSeen: Seen }> {
  const target = await startTarget(echo);
  cleanups.push(() => new Promise<void>((r) => target.server.close(() => r())));
  cleanups.push(() => target.sockets.forEach((s) => s.destroy()));
  const proxy = await startFaultProxy({ target: { port: target.port }, seed: 1, ...faults, ...extra });
  cleanups.push(() => proxy.close());
  const client = connect({ host: "127.0.0.1", port: proxy.port });
  client.setNoDelay(true);
  const clientSeen = watch(client);
  cleanups.push(() => void client.destroy());
  await once(client, "connect");
  await until(() => target.seen.length === 1);
  return { proxy, target, client, clientSeen };
}

const payload = (n: number): Buffer => Buffer.from(Array.from({ length: n }, (_, i) => 65 + (i % 26)));

describe("fault proxy", () => {
  it("forwards both directions untouched and in order when no fault is drawn", async () => {
    const { target, client, clientSeen, proxy } = await setup({});
    const sent = payload(200_000);
    client.write(sent);
    await until(() => clientSeen.data.length === sent.length);
    expect(target.seen[0]!.data.equals(sent)).toBe(true);
    expect(clientSeen.data.equals(sent)).toBe(true);
    expect(proxy.counts().total).toBe(0);
  });

  it("delay holds chunks for the drawn time, in order, in both directions", async () => {
    const { target, client, clientSeen, proxy } = await setup({ toServer: { delay: 1 }, toClient: { delay: 1 } }, true, {
      delayMs: { min: 120, max: 120 },
    });
    const t0 = performance.now();
    for (const part of ["one,", "two,", "three"]) {
      client.write(part);
      await sleep(15);
    }
    await until(() => clientSeen.data.toString() === "one,two,three");
    expect(target.seen[0]!.data.toString()).toBe("one,two,three");
    // One delay each way at least (timers may fire a little early on some platforms: 5 ms of slack).
    expect(target.seen[0]!.times[0]! - t0).toBeGreaterThanOrEqual(115);
    expect(clientSeen.times[0]! - t0).toBeGreaterThanOrEqual(235);
    expect(proxy.counts().faults.toServer.delay).toBeGreaterThanOrEqual(1);
    expect(proxy.counts().faults.toClient.delay).toBeGreaterThanOrEqual(1);
  });

  it("setLatency holds every chunk the set time each way, faults off, in order; a negative latency is refused", async () => {
    const { target, client, clientSeen, proxy } = await setup({ toServer: { drop: 1 }, toClient: { drop: 1 } });
    // The cluster suite's members: faults off (drop only during a blackhole), latency on for a cycle.
    proxy.setFaults(false);
    proxy.setLatency(100);
    const t0 = performance.now();
    for (const part of ["one,", "two,", "three"]) {
      client.write(part);
      await sleep(15);
    }
    await until(() => clientSeen.data.toString() === "one,two,three");
    expect(target.seen[0]!.data.toString()).toBe("one,two,three");
    // 5 ms of slack: timers may fire a little early on some platforms.
    expect(target.seen[0]!.times[0]! - t0).toBeGreaterThanOrEqual(95);
    expect(clientSeen.times[0]! - t0).toBeGreaterThanOrEqual(195);
    expect(proxy.counts().total).toBe(0);
    expect(() => proxy.setLatency(-1)).toThrow(RangeError);
  });

  it("drop toward the server swallows the request, leaves the client hanging, and closes the server side late", async () => {
    const { target, client, clientSeen, proxy } = await setup({ toServer: { drop: 1 } }, true, { lingerMs: { min: 200, max: 200 } });
    client.write("request");
    await sleep(250);
    expect(target.seen[0]!.data.length).toBe(0);
    expect(clientSeen.data.length).toBe(0);
    expect(clientSeen.closedAt).toBeUndefined();
    expect(target.seen[0]!.closedAt).toBeUndefined();
    const left = performance.now();
    client.destroy();
    await until(() => target.seen[0]!.closedAt !== undefined);
    expect(target.seen[0]!.closedAt! - left).toBeGreaterThanOrEqual(180);
    expect(proxy.counts().faults.toServer.drop).toBe(1);
  });

  it("drop toward the client swallows the answer and everything after it, and closes nothing", async () => {
    const { target, client, clientSeen, proxy } = await setup({ toClient: { drop: 1 } });
    client.write("first");
    await until(() => target.seen[0]!.data.length === 5);
    await sleep(100);
    client.write("second");
    await sleep(150);
    expect(clientSeen.data.length).toBe(0);
    expect(target.seen[0]!.data.toString()).toBe("first");
    expect(clientSeen.closedAt).toBeUndefined();
    expect(target.seen[0]!.closedAt).toBeUndefined();
    expect(proxy.counts().faults.toClient.drop).toBe(1);
  });

  it("truncate forwards a strict prefix of a request, then closes both sides", async () => {
    const { target, clientSeen, client, proxy } = await setup({ toServer: { truncate: 1 } }, false);
    const sent = payload(1_000);
    client.write(sent);
    await until(() => target.seen[0]!.ended && clientSeen.ended);
    const got = target.seen[0]!.data;
    expect(got.length).toBeLessThan(sent.length);
    expect(got.equals(sent.subarray(0, got.length))).toBe(true);
    expect(proxy.counts().faults.toServer.truncate).toBe(1);
  });

  it("truncate forwards a strict prefix of an answer, then closes both sides", async () => {
    const { target, clientSeen, client, proxy } = await setup({ toClient: { truncate: 1 } });
    const sent = payload(1_000);
    client.write(sent);
    await until(() => clientSeen.ended && target.seen[0]!.ended);
    expect(target.seen[0]!.data.equals(sent)).toBe(true);
    expect(clientSeen.data.length).toBeLessThan(sent.length);
    expect(clientSeen.data.equals(sent.subarray(0, clientSeen.data.length))).toBe(true);
    expect(proxy.counts().faults.toClient.truncate).toBe(1);
  });

  it.each(["toServer", "toClient"] as const)("reset %s destroys both sides with an RST (ECONNRESET on each)", async (direction) => {
    const { target, clientSeen, client, proxy } = await setup({ [direction]: { reset: 1 } });
    client.write("hello");
    await until(() => clientSeen.closedAt !== undefined && target.seen[0]!.closedAt !== undefined);
    expect(clientSeen.errorCode).toBe("ECONNRESET");
    expect(target.seen[0]!.errorCode).toBe("ECONNRESET");
    expect(clientSeen.data.length).toBe(0);
    if (direction === "toServer") expect(target.seen[0]!.data.length).toBe(0);
    expect(proxy.counts().faults[direction].reset).toBe(1);
  });

  it("the same seed draws the same fault for the same chunk of the same connection; another seed does not", async () => {
    const target = await startTarget(true);
    cleanups.push(() => new Promise<void>((r) => target.server.close(() => r())));
    cleanups.push(() => target.sockets.forEach((s) => s.destroy()));
    const rates: FaultRates = { delay: 0.3, truncate: 0.1, reset: 0.1, drop: 0.1 };
    async function run(seed: number): Promise<string[]> {
      const events: string[] = [];
      const proxy = await startFaultProxy({
        target: { port: target.port },
        seed,
        toServer: rates,
        toClient: rates,
        delayMs: { min: 1, max: 3 },
        lingerMs: { min: 0, max: 0 },
        onFault: (e) => events.push(`${e.connection}/${e.direction}/${e.chunk}/${e.kind}/${e.amount}`),
      });
      for (let c = 0; c < 12; c++) {
        const socket = connect({ host: "127.0.0.1", port: proxy.port });
        const seen = watch(socket);
        await once(socket, "connect");
        // One chunk at a time, the next only once the echo of the last is back: every chunk is its
        // own read at the proxy each way, so the chunk numbering is the same in every run.
        for (let k = 0; k < 6; k++) {
          const text = `chunk ${k}`;
          const want = seen.data.length + text.length;
          socket.write(text);
          const echoed = await until(() => seen.data.length >= want || seen.ended || seen.closedAt !== undefined, 300).then(
            () => seen.data.length >= want,
            () => false, // dropped: the connection hangs
          );
          if (!echoed) break;
        }
        socket.destroy();
      }
      await proxy.close();
      // Sorted: the decisions are fixed per chunk, the order the two directions report them in is not.
      return events.sort();
    }
    const a = await run(42);
    const b = await run(42);
    const c = await run(43);
    expect(a.length).toBeGreaterThan(5);
    expect(a).toEqual(b);
    expect(c).not.toEqual(a);
  });
});
