import { get } from "node:http";
import { connect, type Socket } from "node:net";
import { isLeaseholdError } from "@leasehold/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { createRateLimiter } from "../../src/http/rate-limiter.js";
import { createLockService } from "../../src/service/create-lock-service.js";
import { startServer, type RunningServer } from "../../src/start-server.js";
import { rawRequest } from "../support/raw-request.js";
import { waitFor } from "../support/wait-for.js";
import { errorOf, lockBody, post, tokenOf } from "./security-fixture.js";

let server: RunningServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("max waiting lock requests per namespace", () => {
  it("refuses the waiter beyond the limit with 429, queues nothing and leaves other namespaces alone", async () => {
    server = await startServer({ maxWaitingPerNamespace: 3 });
    const url = server.url;
    const held = tokenOf(await post(url, "ns", "lock", lockBody("d")));
    const waiters = [1, 2, 3].map(() => post(url, "ns", "lock", lockBody("d", 5_000)));
    await waitFor(() => server?.service.snapshot("ns").waitingRequests === 3, "three waiters");
    const before = server.service.snapshot("ns");

    const refused = await post(url, "ns", "lock", lockBody("d", 5_000, { requestId: "r-over" }));
    expect(refused.status).toBe(429);
    const error = errorOf(refused);
    expect(error.code).toBe("TOO_MANY_REQUESTS");
    expect(error.message).toContain("maxWaitingPerNamespace 3");
    expect(error.details).toEqual({ limit: "maxWaitingPerNamespace", value: 3 });
    expect(server.service.snapshot("ns")).toEqual(before);
    // A refused request left no requestId behind: the same id with another body is not a conflict.
    expect((await post(url, "ns", "lock", lockBody("other", 0, { requestId: "r-over" }))).status).toBe(200);

    // What can be granted at once, or does not wait, still passes; so does another namespace.
    expect(tokenOf(await post(url, "ns", "lock", lockBody("free", 5_000)))).toBeTruthy();
    expect((await post(url, "ns", "lock", lockBody("d", 0))).json).toMatchObject({ status: "timeout" });
    const elsewhere = post(url, "ns2", "lock", lockBody("x", 5_000));
    expect(tokenOf(await elsewhere)).toBeTruthy();

    await post(url, "ns", "unlock", { tokens: [held] });
    // The queue drains one by one; each grant frees a slot.
    for (const waiter of waiters) {
      const token = tokenOf(await waiter);
      await post(url, "ns", "unlock", { tokens: [token] });
    }
  });

  it("applies to the embedded service too, and rejects a bad option value", async () => {
    const service = createLockService({ maxWaitingPerNamespace: 1 });
    try {
      const held = await service.lock("ns", lockBody("d"));
      const waiter = service.lock("ns", lockBody("d", 5_000));
      await expect(service.lock("ns", lockBody("d", 5_000))).rejects.toSatisfy((err) => isLeaseholdError(err, "TOO_MANY_REQUESTS"));
      if (held.status !== "acquired") throw new Error("not acquired");
      await service.unlock("ns", { tokens: [held.token] });
      expect((await waiter).status).toBe("acquired");
    } finally {
      await service.close();
    }
    expect(() => createLockService({ maxWaitingPerNamespace: 0 })).toThrow(RangeError);
  });
});

describe("request rate per client address", () => {
  it("token bucket: a burst of one second's worth passes, then retry-after whole seconds, refilled over time", () => {
    let now = 0;
    const limiter = createRateLimiter({ requestsPerSecond: 2, clock: () => now });
    expect([limiter.take("a"), limiter.take("a"), limiter.take("a")]).toEqual([0, 0, 1]);
    expect(limiter.take("b")).toBe(0);
    now += 500;
    expect(limiter.take("a")).toBe(0);
    expect(limiter.take("a")).toBe(1);
    expect(() => createRateLimiter({ requestsPerSecond: 0 })).toThrow(RangeError);
  });

  it("answers 429 with retry-after once a client goes over the rate, before anything else is checked", async () => {
    server = await startServer({ rateLimit: 5 });
    const answers = [];
    for (let i = 0; i < 12; i++) answers.push(await rawRequest(server.url, "/v1/namespaces/ns/timestamps", { body: '{"count":1}', headers: { "content-type": "application/json" } }));
    const statuses = answers.map((a) => a.status);
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    expect(statuses).toContain(429);
    const refused = answers.find((a) => a.status === 429);
    if (refused === undefined) throw new Error("no 429");
    expect(Number(refused.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    const error = errorOf(refused);
    expect(error.code).toBe("TOO_MANY_REQUESTS");
    expect(error.message).toContain("rateLimit 5");
    // Refused before routing or validation: garbage gets the same 429, and nothing was handed out.
    const garbage = await rawRequest(server.url, "/v1/namespaces/ns/timestamps", { body: "{", headers: { "content-type": "application/json" } });
    expect(garbage.status).toBe(429);
  });

  it("keeps a separate bucket per client address", async () => {
    server = await startServer({ rateLimit: 1 });
    const target = `${server.url}/v1/health`;
    // On Linux the whole 127/8 is loopback: a request from 127.0.0.2 is another client address.
    const ask = (localAddress: string) =>
      new Promise<number>((resolve, reject) => {
        get(target, { localAddress, agent: false }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        }).once("error", reject);
      });
    expect(await ask("127.0.0.1")).toBe(200);
    expect(await ask("127.0.0.1")).toBe(429);
    expect(await ask("127.0.0.2")).toBe(200);
    expect(await ask("127.0.0.2")).toBe(429);
  });
});

function openSocket(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve(socket));
    socket.once("error", reject);
  });
}

describe("max concurrent connections", () => {
  it("answers 503 UNAVAILABLE with a JSON body to a connection beyond the limit, then closes it", async () => {
    server = await startServer({ maxConnections: 2 });
    const held = [await openSocket(server.url), await openSocket(server.url)];
    // Give the server the time to see both before the third arrives.
    await new Promise((r) => setTimeout(r, 50));
    const over = await rawRequest(server.url, "/v1/namespaces/ns/timestamps", { body: '{"count":1}', headers: { "content-type": "application/json" } });
    expect(over.status).toBe(503);
    expect(over.headers.connection).toBe("close");
    expect(over.headers["retry-after"]).toBe("1");
    const error = errorOf(over);
    expect(error.code).toBe("UNAVAILABLE");
    expect(error.message).toContain("maxConnections 2");
    expect(server.service.snapshot("ns").nextTimestamp).toBe(1);

    // The connections within the limit are served normally.
    const first = held[0] as Socket;
    const answer = new Promise<string>((resolve) => first.once("data", (d: Buffer) => resolve(d.toString())));
    first.write("GET /v1/health HTTP/1.1\r\nhost: x\r\n\r\n");
    expect(await answer).toMatch(/^HTTP\/1.1 200/);

    // Once one closes, a new connection is accepted.
    (held[1] as Socket).destroy();
    await new Promise((r) => setTimeout(r, 50));
    expect((await rawRequest(server.url, "/v1/health", { method: "GET" })).status).toBe(200);
    first.destroy();
  });
});
