import { createServer, type ClientRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import type { LockResponse } from "@leasehold/protocol";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { createRequestHandler } from "../../src/http/create-request-handler.js";
import { createServerMetrics } from "../../src/metrics/server-metrics.js";
import { createLockService } from "../../src/service/create-lock-service.js";
import type { EmbeddedLockService, WaitingLock } from "../../src/service/embedded-lock-service.js";
import { startServer } from "../../src/start-server.js";
import { rawRequest, type RawResponse } from "../support/raw-request.js";
import { sleep, waitFor } from "../support/wait-for.js";
import { lockBody, post } from "./security-fixture.js";

const ADMIN = "admin-bearer-secret-0123456789";
const SCOPED = "scoped-bearer-secret-0123456789";

/** Every string under a `token` key or in a `tokens` array, anywhere in a JSON value. */
function collectTokens(value: unknown, into: Set<string>): void {
  if (Array.isArray(value)) for (const item of value) collectTokens(item, into);
  else if (typeof value === "object" && value !== null) {
    for (const [key, child] of Object.entries(value)) {
      if (key === "token" && typeof child === "string") into.add(child);
      else if (key === "tokens" && Array.isArray(child)) for (const t of child) if (typeof t === "string") into.add(t);
      else collectTokens(child, into);
    }
  }
}

/** A pino logger at trace writing into `lines`: everything the server could ever log. */
function capturingLogger(lines: string[]) {
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString("utf8"));
      done();
    },
  });
  return pino({ level: "trace" }, stream);
}

/**
 * The real service, except that a lock on a descriptor named `slow…` answers only after `release()`: long enough for
 * its client to leave, so the grant is undelivered and the handler releases (and logs) it.
 */
function slowGrants(service: EmbeddedLockService, granted: (answer: LockResponse) => void) {
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const wrapped: EmbeddedLockService = Object.create(service) as EmbeddedLockService;
  wrapped.beginLock = (namespace: string, request: unknown): LockResponse | WaitingLock => {
    const answer = service.beginLock(namespace, request);
    const descriptor = (request as { locks?: { descriptor?: string }[] }).locks?.[0]?.descriptor;
    if (descriptor?.startsWith("slow") !== true || "abandon" in answer) return answer;
    granted(answer);
    return { answer: gate.then(() => answer), abandon: () => undefined };
  };
  return { wrapped, release: () => release() };
}

describe("lock tokens never reach a log line or a metric", () => {
  it("a workload of every operation, lapses, disconnects, undelivered grants, errors and shutdown leaks none", async () => {
    const lines: string[] = [];
    const logger = capturingLogger(lines);
    const handedOut = new Set<string>();
    const record = (res: RawResponse): RawResponse => {
      collectTokens(res.json, handedOut);
      return res;
    };
    const server = await startServer({ logger, leaseMs: 200, auth: { "*": [ADMIN], ns: [SCOPED] } });
    const url = server.url;
    const call = async (operation: string, body: unknown, namespace = "ns", token = SCOPED) => record(await post(url, namespace, operation, body, token));

    // Locks, refreshes and unlocks, in several modes.
    const first = await call("lock", lockBody("a"));
    const shared = await call("lock", { locks: [{ descriptor: "s", mode: "shared" }, { descriptor: "p", mode: "permit", limit: 2 }] });
    const mine = [...handedOut];
    await call("refresh", { tokens: mine });
    await call("timestamps", { count: 5 });
    await call("transactions/start", { count: 3 });
    await call("immutable-timestamp", {});
    await call("unlock", { tokens: mine });
    expect(first.status).toBe(200);
    expect(shared.status).toBe(200);

    // A waiter granted later, a waiter that times out, and one whose client leaves.
    const holder = await call("lock", lockBody("w"));
    const granted = call("lock", lockBody("w", 5_000));
    await waitFor(() => server.service.snapshot("ns").waitingRequests === 1, "a waiter");
    await call("unlock", { tokens: [(holder.json as { token: string }).token] });
    await granted;
    await call("lock", lockBody("w", 50));
    let leaving: ClientRequest | undefined;
    void rawRequest(url, "/v1/namespaces/ns/lock", {
      body: JSON.stringify(lockBody("w", 5_000)),
      headers: { "content-type": "application/json", authorization: `Bearer ${SCOPED}` },
      onRequest: (r) => (leaving = r),
    }).catch(() => undefined);
    await waitFor(() => server.service.snapshot("ns").waitingRequests === 1, "the leaving waiter");
    leaving?.destroy();
    await waitFor(() => server.service.snapshot("ns").waitingRequests === 0, "the abandon");

    // Errors: a requestId conflict, bad bodies quoting tokens, refused credentials, 404 and 405.
    const some = [...handedOut].slice(0, 3);
    await call("lock", lockBody("r", 0, { requestId: "rid" }));
    await call("lock", lockBody("other", 0, { requestId: "rid" }));
    await call("unlock", { tokens: some, extra: some });
    await call("refresh", { tokens: some.map((t) => `${t}\u0000`) });
    await call("unlock", { tokens: some }, "ns", "wrong-bearer-0123456789");
    await call("unlock", { tokens: some }, "other-ns", SCOPED);
    await rawRequest(url, `/v1/namespaces/ns/${some[0] ?? "x"}`, { method: "GET" });

    // Lease lapses: everything still held (the waiter granted above, transactions) lapses now.
    await sleep(500);
    await call("timestamps", { count: 1 });
    expect(server.service.metrics().leaseLapsesTotal).toBeGreaterThan(0);

    // A waiter still queued at shutdown is answered 503.
    await call("lock", lockBody("z"));
    const atShutdown = call("lock", lockBody("z", 5_000));
    await waitFor(() => server.service.snapshot("ns").waitingRequests === 1, "a waiter at shutdown");
    const metricsText = (await rawRequest(url, "/metrics", { method: "GET", headers: { authorization: `Bearer ${ADMIN}` } })).text;
    await server.close();
    expect((await atShutdown).status).toBe(503);

    // Undelivered grants, on a handler around the real service (its grant arrives after the client left).
    const service = createLockService({ logger, leaseMs: 200 });
    const { wrapped, release } = slowGrants(service, (answer) => collectTokens(answer, handedOut));
    const metrics = createServerMetrics(() => service.metrics(), { version: "t", leaderId: service.leaderId });
    const raw = createServer(createRequestHandler({ service: wrapped, metrics, logger, isClosing: () => false }));
    await new Promise<void>((resolve) => raw.listen(0, "127.0.0.1", resolve));
    const rawUrl = `http://127.0.0.1:${(raw.address() as AddressInfo).port}`;
    let gone: ClientRequest | undefined;
    void rawRequest(rawUrl, "/v1/namespaces/ns/lock", {
      body: JSON.stringify(lockBody("slow-u")),
      headers: { "content-type": "application/json" },
      onRequest: (r) => (gone = r),
    }).catch(() => undefined);
    await waitFor(() => service.snapshot("ns").heldTokens === 1, "the slow grant");
    gone?.destroy();
    await sleep(50);
    release();
    await waitFor(() => lines.some((l) => l.includes("answer undelivered")), "the undelivered log line");
    await waitFor(() => service.snapshot("ns").heldTokens === 0, "the release of the undelivered grant");
    const rawMetrics = metrics.render();
    raw.closeAllConnections();
    await new Promise((resolve) => raw.close(resolve));
    await service.close();

    const logs = lines.join("");
    expect(handedOut.size).toBeGreaterThan(5);
    expect(logs).toContain("lease lapsed");
    expect(logs).toContain("answer undelivered");
    for (const token of handedOut) {
      expect(logs.includes(token), `token in the logs`).toBe(false);
      expect(metricsText.includes(token), `token in /metrics`).toBe(false);
      expect(rawMetrics.includes(token), `token in metrics`).toBe(false);
    }
    for (const secret of [ADMIN, SCOPED, "wrong-bearer-0123456789"]) expect(logs.includes(secret), "bearer token in the logs").toBe(false);
  });
});
