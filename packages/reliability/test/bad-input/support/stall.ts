import type { RunningServer } from "@leasehold/server";
import { encodeRequest, sendRaw, type RawAnswer } from "./raw-http.js";

/** What a stalled client saw, and after how long. */
export interface StallResult {
  readonly answer: RawAnswer;
  readonly seconds: number;
}

/**
 * A client that sends part of a request (`head` only: part of the header block; `body`: the whole
 * head and half the body) and then goes silent for up to `waitMs` without closing.
 */
export async function stall(server: RunningServer, part: "head" | "body", waitMs: number, namespace: string): Promise<StallResult> {
  const port = Number(new URL(server.url).port);
  const request = encodeRequest({ method: "POST", target: `/v1/namespaces/${namespace}/timestamps`, headers: [["content-type", "application/json"]], body: Buffer.from('{"count":0}') });
  const split = part === "head" ? 40 : request.indexOf("\r\n\r\n") + 4 + 5;
  const started = performance.now();
  const answer = await sendRaw(port, [request.subarray(0, split)], { timeoutMs: waitMs });
  return { answer, seconds: (performance.now() - started) / 1000 };
}

/**
 * A client that pauses `pauseMs` in the middle of its body (or head), then sends the rest: it must
 * get its ordinary answer (`400` for the invalid body sent here), not a timeout.
 */
export async function pauseThenFinish(server: RunningServer, part: "head" | "body", pauseMs: number, namespace: string): Promise<RawAnswer> {
  const port = Number(new URL(server.url).port);
  const request = encodeRequest({ method: "POST", target: `/v1/namespaces/${namespace}/timestamps`, headers: [["content-type", "application/json"]], body: Buffer.from('{"count":0}') });
  const split = part === "head" ? 40 : request.indexOf("\r\n\r\n") + 4 + 5;
  return sendRaw(port, [request.subarray(0, split), request.subarray(split)], { delayMs: pauseMs, timeoutMs: pauseMs * 2 + 5_000 });
}
