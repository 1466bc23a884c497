import { createHash } from "node:crypto";
import { Writable } from "node:stream";
import { pino, type Logger } from "pino";
import { afterEach } from "vitest";
import { startServer, type RunningServer } from "../../src/start-server.js";
import { rawRequest, type RawResponse } from "../support/raw-request.js";
import { jsonHeaders, post, tokenOf } from "../security/security-fixture.js";

/** The protocol's fingerprint, computed independently of the server's code. */
export function fingerprint(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex").slice(0, 16);
}

/** GET a path with an optional bearer token, on a fresh connection. */
export function get(url: string, path: string, token?: string): Promise<RawResponse> {
  return rawRequest(url, path, { method: "GET", headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });
}

/** POST a revoke body (a string is sent as is). */
export function revoke(url: string, namespace: string, body: unknown, token?: string): Promise<RawResponse> {
  return post(url, namespace, "revoke", body, token);
}

/** Lock over HTTP and answer the token; `extra` is merged into the request body. */
export async function lockToken(url: string, namespace: string, body: unknown, token?: string): Promise<string> {
  return tokenOf(await post(url, namespace, "lock", body, token));
}

/** A pino logger at `level` whose parsed lines land in `lines`. */
export function capturingLogger(lines: Record<string, unknown>[], level = "trace"): Logger {
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString("utf8").split("\n")) if (line.trim() !== "") lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return pino({ level }, stream);
}

export { jsonHeaders, post, tokenOf };

/**
 * A `start(options)` for one test file: each server it starts (with `defaults` under the test's own
 * options) is closed after the test, so a failing test leaves no listening socket behind. Call it
 * once, at the top of the file: it registers the file's `afterEach`.
 */
export function serversClosedAfterEach(defaults: Parameters<typeof startServer>[0] = {}): (options: Parameters<typeof startServer>[0]) => Promise<RunningServer> {
  let servers: RunningServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.map((s) => s.close()));
    servers = [];
  });
  return async (options) => {
    const server = await startServer({ ...defaults, ...options });
    servers.push(server);
    return server;
  };
}
