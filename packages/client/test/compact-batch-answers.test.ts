import type { ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import type { LockBatchLine, LockRequest } from "@leasehold/protocol";
import { HttpLockService } from "../src/index.js";
import { LockBatchLineReader } from "../src/read-lock-batch-lines.js";
import { rawHttpServer } from "./support/raw-http-server.js";

const lease = { leaderId: "L-1", validForMs: 4_000 };
const requests: LockRequest[] = [
  { requestId: "r0", locks: [{ descriptor: "é-0", mode: "exclusive" }], acquireTimeoutMs: 0 },
  { requestId: "r1", locks: [{ descriptor: "doc", mode: "shared" }, { descriptor: "pool", mode: "permit", limit: 3 }], acquireTimeoutMs: 0 },
  { requestId: "r2", locks: [{ descriptor: "x", mode: "exclusive" }], acquireTimeoutMs: 0 },
];

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/** A server that answers `lock-batch` with `chunks`, each its own write a little after the last. */
async function answering(chunks: readonly Buffer[], seen: string[] = []) {
  const server = await rawHttpServer((_req, body, res: ServerResponse) => {
    seen.push(body);
    res.writeHead(200, { "content-type": "application/x-ndjson; charset=utf-8" });
    let at = 0;
    const next = (): void => {
      if (at === chunks.length) return void res.end();
      res.write(chunks[at++], () => setTimeout(next, 1));
    };
    next();
  });
  const service = new HttpLockService({ baseUrl: server.url, retry: false });
  cleanups.push(() => service.close(), server.close);
  return service;
}

/** `text`'s UTF-8 bytes cut every `size` bytes (so a cut may fall inside a character). */
const cut = (text: string, size: number): Buffer[] => {
  const bytes = Buffer.from(text);
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
};

describe("compact lock-batch answers in the HTTP transport", () => {
  it("asks for them, and hands every caller the full line, however the stream is cut", async () => {
    const error = { code: "TOO_MANY_REQUESTS", message: "too many waiters — é", details: {} };
    const text = [
      `{"index":2,"error":${JSON.stringify(error)}}\n`,
      `{"lease":${JSON.stringify(lease)}}\n`,
      `{"index":1,"token":"tok-1","fencingTokens":[11,12]}\n`,
      `{"index":0,"token":"tok-0","fencingTokens":[13]}\n`,
    ].join("");
    const expected: LockBatchLine[] = [
      { index: 2, error },
      { index: 1, result: { status: "acquired", token: "tok-1", lease, acquired: [{ descriptor: "doc", mode: "shared", fencingToken: 11 }, { descriptor: "pool", mode: "permit", fencingToken: 12 }] } },
      { index: 0, result: { status: "acquired", token: "tok-0", lease, acquired: [{ descriptor: "é-0", mode: "exclusive", fencingToken: 13 }] } },
    ];
    for (const size of [text.length * 2, 64, 7, 2, 1]) {
      const seen: string[] = [];
      const service = await answering(cut(text, size), seen);
      const lines: LockBatchLine[] = [];
      await service.lockBatch("ns", { requests }, (line) => lines.push(line));
      expect(JSON.parse(seen[0]!), `cut every ${size} bytes`).toEqual({ requests, compact: true });
      expect(lines, `cut every ${size} bytes`).toEqual(expected);
    }
  });

  it.each([
    ["a grant line before any lease line", `{"index":0,"token":"t","fencingTokens":[1]}\n`, /before any lease line/],
    ["a grant line with the wrong number of fencing tokens", `{"lease":${JSON.stringify(lease)}}\n{"index":1,"token":"t","fencingTokens":[1]}\n`, /1 fencing tokens for an entry of 2 locks/],
    ["a grant line for an entry never sent", `{"lease":${JSON.stringify(lease)}}\n{"index":7,"token":"t","fencingTokens":[1]}\n`, /entry 7, which was not sent/],
  ])("%s rejects the call BAD_RESPONSE after the lines before it were delivered", async (_what, bad, message) => {
    const service = await answering([Buffer.from(`{"index":2,"result":{"status":"timeout"}}\n`), Buffer.from(bad)]);
    const lines: LockBatchLine[] = [];
    await expect(service.lockBatch("ns", { requests }, (line) => lines.push(line))).rejects.toMatchObject({ code: "BAD_RESPONSE", message: expect.stringMatching(message) as string });
    expect(lines).toEqual([{ index: 2, result: { status: "timeout" } }]);
  });
});

describe("LockBatchLineReader", () => {
  const timeout = `{"index":2,"result":{"status":"timeout"}}\n`;

  it("a line that is not JSON throws BAD_RESPONSE after the lines before it were handed on", () => {
    const lines: LockBatchLine[] = [];
    const reader = new LockBatchLineReader(requests, (line) => lines.push(line));
    expect(() => reader.push(Buffer.from(`${timeout}{"index":0,oops}\n`))).toThrow(expect.objectContaining({ code: "BAD_RESPONSE", message: expect.stringMatching(/not JSON/) as string }) as Error);
    expect(lines).toEqual([{ index: 2, result: { status: "timeout" } }]);
  });

  it("a body ending in the middle of a line is BAD_RESPONSE at its end", () => {
    const reader = new LockBatchLineReader(requests, () => undefined);
    reader.push(Buffer.from(`${timeout}{"index":1`));
    expect(() => reader.end()).toThrow(expect.objectContaining({ code: "BAD_RESPONSE", message: expect.stringMatching(/middle of a line/) as string }) as Error);
  });

  it("a character split across chunks is decoded whole", () => {
    const lines: LockBatchLine[] = [];
    const reader = new LockBatchLineReader(requests, (line) => lines.push(line));
    const bytes = Buffer.from(`{"index":2,"error":{"code":"CANCELLED","message":"é","details":{}}}\n`);
    const at = bytes.indexOf(0xc3) + 1; // inside "é"
    reader.push(bytes.subarray(0, at));
    reader.push(bytes.subarray(at));
    reader.end();
    expect(lines).toEqual([{ index: 2, error: { code: "CANCELLED", message: "é", details: {} } }]);
  });
});
