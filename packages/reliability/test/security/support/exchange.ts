import { connect } from "node:net";
import { parseAnswer } from "../../../src/wire/parse-answer.js";

/** One HTTP/1.1 request as written to the socket, byte for byte. */
export interface WireRequest {
  readonly method: string;
  /** Request target, written as given (already percent-encoded where needed). */
  readonly target: string;
  /** Header lines in order; values are written as latin1, so bytes 0x80..0xff can be sent. */
  readonly headers: readonly (readonly [string, string])[];
  readonly body?: string | Buffer | undefined;
}

/** Serialise a {@link WireRequest} with `host`, `connection: close` and a `content-length` when there is a body. */
export function encode(request: WireRequest): Buffer {
  const body = request.body === undefined ? Buffer.alloc(0) : typeof request.body === "string" ? Buffer.from(request.body, "utf8") : request.body;
  let head = `${request.method} ${request.target} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n`;
  for (const [name, value] of request.headers) head += `${name}: ${value}\r\n`;
  if (request.body !== undefined) head += `content-length: ${body.length}\r\n`;
  return Buffer.concat([Buffer.from(`${head}\r\n`, "latin1"), body]);
}

/** What came back on one connection. */
export interface Answer {
  /** Status of the answer, or null when the connection ended without one. */
  readonly status: number | null;
  /** The status line and header lines exactly as received (latin1), without the blank line. */
  readonly head: string;
  /** Header names lower-cased; the last value wins. */
  readonly headers: Readonly<Record<string, string>>;
  /** The body, with chunked transfer coding removed. */
  readonly body: Buffer;
  /** The client gave up (`timeoutMs`) before a complete answer or a close. */
  readonly timedOut: boolean;
  /** The server ended the connection after its answer (or instead of one) within `closeWaitMs`. */
  readonly closedByServer: boolean;
  /** A socket error seen before the answer was complete (ECONNREFUSED, ECONNRESET), or null. */
  readonly socketError: string | null;
}

/** Options of {@link exchange}. */
export interface ExchangeOptions {
  /** Source address of the connection (any of 127/8 on Linux): the rate limit keys on it. */
  readonly localAddress?: string | undefined;
  /** Give up after this long. Default 10,000 ms. */
  readonly timeoutMs?: number | undefined;
  /** After a complete answer, wait this long for the server to close the connection. Default 0: do not wait. */
  readonly closeWaitMs?: number | undefined;
}

/**
 * Write `request` to a fresh TCP connection to `127.0.0.1:port` (from `localAddress` if given) and
 * read the first answer. Resolves when the answer is complete (and, with `closeWaitMs`, once the
 * server closed or that time passed), when the connection ends, or after `timeoutMs`; never rejects.
 */
export function exchange(port: number, request: Buffer, options: ExchangeOptions = {}): Promise<Answer> {
  const { timeoutMs = 10_000, closeWaitMs = 0 } = options;
  return new Promise((resolve) => {
    const socket = connect({ port, host: "127.0.0.1", localAddress: options.localAddress });
    let data = Buffer.alloc(0);
    let socketError: string | null = null;
    let ended = false;
    let settled = false;
    let closeTimer: NodeJS.Timeout | undefined;
    const settle = (timedOut: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(closeTimer);
      socket.destroy();
      const parsed = parseAnswer(data, true);
      resolve({
        status: parsed?.status ?? null,
        head: parsed?.head ?? "",
        headers: parsed?.headers ?? {},
        body: parsed?.body ?? Buffer.alloc(0),
        timedOut,
        closedByServer: ended,
        socketError,
      });
    };
    const timer = setTimeout(() => settle(true), timeoutMs);
    const onProgress = (): void => {
      const parsed = parseAnswer(data, ended);
      if (ended) return settle(false);
      if (parsed === null || !parsed.complete || closeTimer !== undefined) return;
      if (closeWaitMs === 0) return settle(false);
      closeTimer = setTimeout(() => settle(false), closeWaitMs);
    };
    socket.on("data", (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      onProgress();
    });
    socket.on("end", () => {
      ended = true;
      onProgress();
    });
    socket.on("close", () => {
      ended = true;
      onProgress();
    });
    socket.on("error", (err: NodeJS.ErrnoException) => {
      if (parseAnswer(data, false)?.complete !== true) socketError = err.code ?? err.message;
    });
    socket.once("connect", () => socket.write(request));
  });
}

/** The answer's body parsed as JSON, or undefined when it is not JSON. */
export function jsonOf(answer: Answer): unknown {
  try {
    return JSON.parse(answer.body.toString("utf8")) as unknown;
  } catch {
    return undefined;
  }
}

/** The answer with the `date` header's value masked: the only part of two identical answers that may differ by the clock. */
export function withoutDate(answer: Answer): string {
  return `${answer.head.replace(/^date: .*$/im, "date: *")}\r\n\r\n${answer.body.toString("latin1")}`;
}
