import { request as httpRequest, type ClientRequest, type IncomingHttpHeaders } from "node:http";
import type { LockBatchLine, LockResponse } from "@leasehold/protocol";

/**
 * One `lock-batch` request over a fresh node:http connection, read as a stream: each NDJSON line
 * is handed out as soon as its bytes arrive, so a test can prove a line came before another entry
 * resolved (for example, read the first grant while a blocker still holds the lock).
 */
export class BatchStream {
  /** The HTTP status, once the head arrived. */
  status = 0;
  /** The response headers, once the head arrived. */
  headers: IncomingHttpHeaders = {};
  /** Every line received so far, in arrival order. */
  readonly lines: LockBatchLine[] = [];
  /** The raw request, to destroy it mid-flight (a disconnect). */
  readonly req: ClientRequest;
  /** Resolves with the status and headers once the head arrived. */
  readonly head: Promise<void>;
  /** Resolves with every line once the answer ended; rejects if the connection failed first. */
  readonly done: Promise<LockBatchLine[]>;
  /** The body of a non-200 answer (a whole-batch error), parsed. */
  errorBody: unknown;

  private readonly waiters: (() => void)[] = [];
  private handedOut = 0;

  constructor(url: string, namespace: string, body: unknown, rawBody?: string) {
    const text = rawBody ?? JSON.stringify(body);
    this.req = httpRequest(new URL(`/v1/namespaces/${namespace}/lock-batch`, url), {
      method: "POST",
      headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(text)) },
      agent: false,
    });
    let onHead: () => void = () => undefined;
    this.head = new Promise((resolve) => (onHead = resolve));
    this.done = new Promise((resolve, reject) => {
      this.req.on("error", reject);
      this.req.on("response", (res) => {
        this.status = res.statusCode ?? 0;
        this.headers = res.headers;
        onHead();
        let buffered = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          buffered += chunk;
          if (this.status !== 200) return;
          let nl = buffered.indexOf("\n");
          while (nl >= 0) {
            this.lines.push(JSON.parse(buffered.slice(0, nl)) as LockBatchLine);
            buffered = buffered.slice(nl + 1);
            nl = buffered.indexOf("\n");
          }
          this.wake();
        });
        res.on("error", reject);
        res.on("end", () => {
          if (this.status !== 200) this.errorBody = JSON.parse(buffered) as unknown;
          else if (buffered !== "") reject(new Error(`answer ended inside a line: ${JSON.stringify(buffered)}`));
          this.wake();
          resolve(this.lines);
        });
      });
    });
    this.done.catch(() => undefined);
    this.req.end(text);
  }

  /** The next line not yet handed out by this method, waiting for it (at most `timeoutMs`). */
  async next(timeoutMs = 5_000): Promise<LockBatchLine> {
    const deadline = Date.now() + timeoutMs;
    while (this.lines.length <= this.handedOut) {
      if (Date.now() > deadline) throw new Error(`no line ${this.handedOut} within ${timeoutMs} ms (have ${JSON.stringify(this.lines)})`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 20);
      });
    }
    return this.lines[this.handedOut++] as LockBatchLine;
  }

  /** The line of entry `index`, once it arrived. */
  async line(index: number, timeoutMs = 5_000): Promise<LockBatchLine> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.lines.find((l) => l.index === index);
      if (found !== undefined) return found;
      if (Date.now() > deadline) throw new Error(`no line for entry ${index} within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}

/** The `lock` answer on a line, failing the test if the line is an error. */
export function resultOf(line: LockBatchLine): LockResponse {
  if (!("result" in line)) throw new Error(`entry ${line.index} failed: ${JSON.stringify(line.error)}`);
  return line.result;
}

/** The token of a line's `acquired` answer. */
export function tokenOf(line: LockBatchLine): string {
  const result = resultOf(line);
  if (result.status !== "acquired") throw new Error(`entry ${line.index} answered ${result.status}`);
  return result.token;
}

/** The error code of a line, or `undefined` for a result line. */
export function codeOf(line: LockBatchLine): string | undefined {
  return "error" in line ? line.error.code : undefined;
}

/** A lock request body on one exclusive descriptor. */
export function exclusive(descriptor: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { locks: [{ descriptor, mode: "exclusive" }], ...extra };
}
