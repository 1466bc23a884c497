import type { IncomingMessage } from "node:http";
import { connect, type Socket } from "node:net";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readBody } from "../../src/support/read-body.js";
import { startServer, type RunningServer } from "../../src/start-server.js";

const CHUNK = 64 * 1024;

/**
 * Send a chunked body of `chunks` × 64 KiB over a raw socket, one chunk every `everyMs`, without
 * reading anything until the whole body was written (a client that sends first and reads after,
 * as most do): what arrived by then, and how the connection ended.
 */
function sendSlowly(url: string, chunks: number, everyMs: number): Promise<{ received: string; error: string | null }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket: Socket = connect(Number(port), hostname);
    // Nothing is read while sending: the answer waits in the kernel's receive buffer meanwhile.
    socket.pause();
    let received = "";
    let error: string | null = null;
    socket.on("data", (d: Buffer) => (received += d.toString("latin1")));
    socket.on("error", (err: NodeJS.ErrnoException) => (error ??= err.code ?? err.message));
    socket.on("close", () => resolve({ received, error }));
    socket.write(`POST /v1/namespaces/big/timestamps HTTP/1.1\r\nhost: ${hostname}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n`);
    const payload = `${CHUNK.toString(16)}\r\n${" ".repeat(CHUNK)}\r\n`;
    let sent = 0;
    const next = (): void => {
      if (socket.destroyed) return;
      if (sent === chunks) {
        socket.write("0\r\n\r\n");
        socket.resume();
        return;
      }
      sent++;
      socket.write(payload);
      setTimeout(next, everyMs);
    };
    next();
  });
}

describe("HTTP: a chunked body over 1 MiB sent slowly is answered 413, and the answer reaches the client", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it("a client still sending when the limit passes reads the 413 once it finished sending (no reset connection)", async () => {
    // 2 MiB: the limit passes half way; the rest keeps coming for about as long again.
    const { received, error } = await sendSlowly(server.url, 32, 5);
    expect(error).toBeNull();
    expect(received).toMatch(/^HTTP\/1\.1 413 /);
    expect(received).toMatch(/connection: close/i);
    expect(received).toContain('"code":"PAYLOAD_TOO_LARGE"');
    expect((await fetch(`${server.url}/v1/health`)).status).toBe(200);
  });
});

describe("readBody: an oversized body is read to its end, up to a bound, before it is refused", () => {
  const body = (headers: Record<string, string> = {}) => Object.assign(new PassThrough(), { headers, complete: false }) as PassThrough & { complete: boolean };
  const outcome = (p: Promise<Buffer>) => p.then((b) => `read ${b.length}`, (e: { code?: string }) => e.code ?? String(e));

  it("past the limit but within the bound: refused only once the body ended (the client has sent everything)", async () => {
    const req = body();
    let settled: string | null = null;
    void outcome(readBody(req as unknown as IncomingMessage, 10, 20)).then((o) => (settled = o));
    req.write(Buffer.alloc(15));
    req.write(Buffer.alloc(10));
    await new Promise((r) => setImmediate(r));
    expect(settled).toBeNull();
    req.complete = true;
    req.end();
    await new Promise((r) => setImmediate(r));
    expect(settled).toBe("PAYLOAD_TOO_LARGE");
  });

  it("past the bound: refused at once, without reading on (nothing makes the server read without end)", async () => {
    const req = body();
    const p = outcome(readBody(req as unknown as IncomingMessage, 10, 20));
    req.write(Buffer.alloc(31));
    expect(await p).toBe("PAYLOAD_TOO_LARGE");
    // A declared length past the bound is refused before a byte is read.
    expect(await outcome(readBody(body({ "content-length": "31" }) as unknown as IncomingMessage, 10, 20))).toBe("PAYLOAD_TOO_LARGE");
  });
});
