import { connect } from "node:net";
import { parseAnswer } from "../../../src/wire/parse-answer.js";

/** What one raw exchange produced: the first answer on the socket, if any, and how the socket ended. */
export interface RawAnswer {
  /** Status code of the first answer, or null when the server closed without answering. */
  readonly status: number | null;
  /** Header names lower-cased; the last value wins. */
  readonly headers: Readonly<Record<string, string>>;
  /** The answer's body bytes (by content-length, or everything until close). */
  readonly body: Buffer;
  /** True when the client gave up waiting (`timeoutMs` passed) before an answer or a close. */
  readonly timedOut: boolean;
  /** A socket error seen before any answer arrived (ECONNRESET, EPIPE), or null. */
  readonly socketError: string | null;
}

/** Options of {@link sendRaw}. */
export interface SendRawOptions {
  /** Wait this long between pieces (a slow client). Default 0: everything in one write. */
  readonly delayMs?: number | undefined;
  /** Give up after this many milliseconds. Default 10,000. */
  readonly timeoutMs?: number | undefined;
  /** Half-close the socket after the last piece (the client sends nothing more). Default false. */
  readonly endAfterWrite?: boolean | undefined;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Send bytes over a fresh TCP connection, exactly as given (no normalisation of method, path,
 * headers or framing), and read the first HTTP answer. Resolves when that answer is complete (its
 * `content-length` has arrived), when the server closes, or after `timeoutMs`; never rejects.
 * With `delayMs`, each piece is written after that pause, so a body can be trickled byte by byte.
 */
export function sendRaw(port: number, pieces: readonly (string | Buffer)[], options: SendRawOptions = {}): Promise<RawAnswer> {
  const { delayMs = 0, timeoutMs = 10_000, endAfterWrite = false } = options;
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.setNoDelay(true);
    let data = Buffer.alloc(0);
    let socketError: string | null = null;
    let done = false;
    const finish = (timedOut: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const answer = parseAnswer(data, true);
      resolve({ status: answer?.status ?? null, headers: answer?.headers ?? {}, body: answer?.body ?? Buffer.alloc(0), timedOut, socketError });
    };
    const timer = setTimeout(() => finish(true), timeoutMs);
    socket.on("data", (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      if (parseAnswer(data, false)?.complete === true) finish(false);
    });
    socket.on("error", (err: NodeJS.ErrnoException) => {
      if (data.length === 0) socketError = err.code ?? err.message;
    });
    socket.on("close", () => finish(false));
    socket.once("connect", () => {
      void (async () => {
        for (const piece of pieces) {
          if (done || socket.destroyed) return;
          if (delayMs > 0) await sleep(delayMs);
          if (done || socket.destroyed) return;
          socket.write(piece);
        }
        if (endAfterWrite && !done && !socket.destroyed) socket.end();
      })();
    });
  });
}

/** Everything needed to write one HTTP/1.1 request by hand. */
export interface RawRequest {
  readonly method: string;
  readonly target: string | Buffer;
  /** Header lines in order, written as given: names and values are not checked. */
  readonly headers: readonly (readonly [string, string])[];
  readonly body: Buffer;
  /** Add `content-length` from the body length (default true). */
  readonly contentLength?: boolean | undefined;
}

/** Serialise a {@link RawRequest}; `connection: close` is always sent so one request uses one socket. */
export function encodeRequest(request: RawRequest): Buffer {
  const lines: (string | Buffer)[] = [Buffer.from(`${request.method} `, "latin1"), request.target, Buffer.from(" HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n", "latin1")];
  for (const [name, value] of request.headers) lines.push(Buffer.from(`${name}: ${value}\r\n`, "latin1"));
  if (request.contentLength ?? true) lines.push(Buffer.from(`content-length: ${request.body.length}\r\n`, "latin1"));
  lines.push(Buffer.from("\r\n", "latin1"), request.body);
  return Buffer.concat(lines.map((l) => (typeof l === "string" ? Buffer.from(l, "latin1") : l)));
}
