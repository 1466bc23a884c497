import { connect, type Socket } from "node:net";
import { parseAnswer } from "../../../src/wire/parse-answer.js";

/**
 * A keep-alive connection kept open to take one of the server's connection slots. `ping()` sends
 * `GET /v1/health` on it and resolves with the status (or null if the connection is gone), which
 * both proves the server serves it and keeps it from idling out (node's keepAliveTimeout is 5 s).
 */
export class HeldConnection {
  private data = Buffer.alloc(0);
  private waiting: ((status: number | null) => void) | null = null;
  /** True once either side closed the connection. */
  closed = false;

  private constructor(private readonly socket: Socket) {
    socket.on("data", (chunk: Buffer) => {
      this.data = Buffer.concat([this.data, chunk]);
      const parsed = parseAnswer(this.data, false);
      if (parsed === null || !parsed.complete) return;
      // One answer per ping; keep-alive answers carry a content-length, so the rest is the next answer.
      const length = Number(parsed.headers["content-length"] ?? 0);
      this.data = this.data.subarray(this.data.indexOf("\r\n\r\n") + 4 + length);
      const done = this.waiting;
      this.waiting = null;
      done?.(parsed.status);
    });
    const gone = (): void => {
      this.closed = true;
      const done = this.waiting;
      this.waiting = null;
      done?.(null);
    };
    socket.on("close", gone);
    socket.on("error", gone);
  }

  /** Open a connection from `localAddress` to `127.0.0.1:port`. */
  static open(port: number, localAddress: string): Promise<HeldConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect({ port, host: "127.0.0.1", localAddress }, () => resolve(new HeldConnection(socket)));
      socket.once("error", reject);
    });
  }

  /** Send `GET /v1/health` and resolve with the answer's status, or null when the connection closed first. */
  ping(timeoutMs = 10_000): Promise<number | null> {
    if (this.closed) return Promise.resolve(null);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting = null;
        resolve(null);
      }, timeoutMs);
      this.waiting = (status) => {
        clearTimeout(timer);
        resolve(status);
      };
      this.socket.write("GET /v1/health HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n");
    });
  }

  /** Close it from the client side. */
  close(): void {
    this.socket.destroy();
  }
}
