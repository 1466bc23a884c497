import { connect, type Socket } from "node:net";

/**
 * One keep-alive HTTP/1.1 connection that sends JSON POSTs and parses answers with the least work
 * possible, like wrk does: a load generator must cost less than the server it measures, or the
 * benchmark measures the generator. (A full client such as undici spends about as much CPU per
 * request as the server, which on a 2-core machine caps the figure at the generator's speed.)
 * Only what the lock server sends is understood: a status line, headers with `content-length`,
 * and a body. One request at a time per connection.
 */
export class RawHttpConnection {
  private readonly socket: Socket;
  private buffer: Buffer = Buffer.alloc(0);
  private waiting: { resolve: (answer: { status: number; body: string }) => void; reject: (err: Error) => void } | null = null;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.setNoDelay(true);
    socket.on("data", (chunk: Buffer) => {
      this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
      this.tryParse();
    });
    socket.on("error", (err) => this.fail(err));
    socket.on("close", () => this.fail(new Error("connection closed")));
  }

  /** Open a connection to `url`'s host and port. */
  static open(url: string): Promise<RawHttpConnection> {
    const { hostname, port } = new URL(url);
    return new Promise((resolve, reject) => {
      const socket = connect({ host: hostname, port: Number(port) }, () => resolve(new RawHttpConnection(socket)));
      socket.once("error", reject);
    });
  }

  /** POST `body` (already JSON) to `path`; resolves with the status and body text. */
  post(path: string, body: string): Promise<{ status: number; body: string }> {
    const payload = Buffer.from(body);
    this.socket.write(
      `POST ${path} HTTP/1.1\r\nhost: bench\r\ncontent-type: application/json\r\ncontent-length: ${payload.length}\r\n\r\n${body}`,
    );
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
    });
  }

  close(): void {
    this.socket.destroy();
  }

  /** True once the socket is gone (closed by either side, e.g. the server's keep-alive timeout): open a new one. */
  get closed(): boolean {
    return this.socket.destroyed;
  }

  private tryParse(): void {
    const end = this.buffer.indexOf("\r\n\r\n");
    if (end < 0 || !this.waiting) return;
    const head = this.buffer.toString("latin1", 0, end);
    const match = /content-length:\s*(\d+)/i.exec(head);
    if (!match) return this.fail(new Error(`answer without content-length: ${head}`));
    const length = Number(match[1]);
    if (this.buffer.length < end + 4 + length) return;
    const status = Number(head.slice(9, 12));
    const body = this.buffer.toString("utf8", end + 4, end + 4 + length);
    this.buffer = this.buffer.subarray(end + 4 + length);
    const waiting = this.waiting;
    this.waiting = null;
    waiting.resolve({ status, body });
  }

  private fail(err: Error): void {
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.reject(err);
  }
}
