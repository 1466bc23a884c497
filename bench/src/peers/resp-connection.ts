import { connect, type Socket } from "node:net";
import { encodeCommands, RespReader, type RespValue } from "./resp.js";

/**
 * One TCP connection to a Redis server, commands pipelined: `send` writes any number of commands in
 * one socket write and resolves with their replies, which Redis answers in order on a connection.
 * Written for the benchmark's Redis peer so that a lock's `SET NX PX` and `WAIT` leave in one write,
 * which a general client does not promise. No reconnection: a closed socket fails what is pending.
 */
export class RespConnection {
  private readonly reader = new RespReader();
  /** Who waits for each reply still to come, oldest first. */
  private readonly pending: { resolve(value: RespValue): void; reject(err: Error): void }[] = [];
  private closedWith: Error | undefined;

  private constructor(private readonly socket: Socket) {
    socket.setNoDelay(true);
    socket.on("data", (chunk: Buffer) => {
      for (const reply of this.reader.push(chunk)) this.pending.shift()?.resolve(reply);
    });
    const fail = (err: Error): void => {
      this.closedWith ??= err;
      for (const waiter of this.pending.splice(0)) waiter.reject(this.closedWith);
    };
    socket.on("error", fail);
    socket.on("close", () => fail(new Error("Redis connection closed")));
  }

  /** Connect to `127.0.0.1:port`; rejects when nothing answers within `timeoutMs` (default 2 s: loopback answers in far less). */
  static open(port: number, timeoutMs = 2_000): Promise<RespConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: "127.0.0.1", port });
      const timer = setTimeout(() => socket.destroy(new Error(`no connection to Redis on port ${port} within ${timeoutMs} ms`)), timeoutMs);
      socket.once("error", (err) => {
        clearTimeout(timer);
        reject(err);
      });
      socket.once("connect", () => {
        clearTimeout(timer);
        resolve(new RespConnection(socket));
      });
    });
  }

  /**
   * Write `commands` in one write and resolve with their replies in the same order (an error reply
   * is a `RespError` value in place). Rejects when the connection fails before every reply came.
   */
  send(commands: readonly (readonly (string | number)[])[]): Promise<RespValue[]> {
    if (this.closedWith !== undefined) return Promise.reject(this.closedWith);
    const replies = commands.map(() => new Promise<RespValue>((resolve, reject) => this.pending.push({ resolve, reject })));
    this.socket.write(encodeCommands(commands));
    return Promise.all(replies);
  }

  /** One command; its reply. */
  async call(...command: (string | number)[]): Promise<RespValue> {
    return (await this.send([command]))[0]!;
  }

  /** Close the socket (pending replies fail). */
  close(): void {
    this.socket.destroy();
  }
}
