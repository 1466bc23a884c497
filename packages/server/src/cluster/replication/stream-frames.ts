import { createHmac, randomBytes } from "node:crypto";
import { FrameMac, macEquals } from "./frame-mac.js";

/**
 * Framing and per-frame authentication of the replication stream (stream-replication-transport.ts,
 * replication-stream-route.ts): after the signed upgrade, each side writes frames of
 * `[length: u32 BE][mac: 32 bytes][payload]`, where `length` counts the mac and the payload and the
 * payload is UTF-8 JSON (what the JSON holds each way: replication-stream-codec.ts). Each frame's MAC is HMAC-SHA256 under the stream's session key of the
 * direction, the frame's number in that direction and the payload: a frame cannot be forged without
 * the cluster key, nor replayed, reordered or moved to the other direction or another stream
 * (computed by frame-mac.ts from the key's padded blocks, made once per stream).
 */

/** The `Upgrade` token of the replication stream. */
export const STREAM_PROTOCOL = "leasehold-replication/2";

/** The header of the 101 answer that carries the standby's nonce. */
export const STREAM_NONCE_HEADER = "x-leasehold-stream-nonce";

/** Path prefix of the stream's upgrade route (`/v1/internal/replication-stream/{shard}?nonce=…`). */
export const STREAM_PATH_PREFIX = "/v1/internal/replication-stream/";

/** Bytes of a nonce (each side picks one per stream). */
export const NONCE_BYTES = 16;

const MAC_BYTES = 32;
const HEADER_BYTES = 4 + MAC_BYTES;

/** Which way a frame travels: its MAC differs, so a frame cannot be reflected back. */
export type FrameDirection = "to-standby" | "to-leader";

/** A fresh nonce, as hex. */
export function newNonce(): string {
  return randomBytes(NONCE_BYTES).toString("hex");
}

/** The stream's upgrade path for `shard` with the leader's nonce (the path is what the upgrade request signs). */
export function streamPath(shard: number, leaderNonce: string): string {
  return `${STREAM_PATH_PREFIX}${shard}?nonce=${leaderNonce}`;
}

/** `shard` and the leader's nonce of a stream upgrade path, or `null` when the path is not one. */
export function parseStreamPath(path: string): { readonly shard: number; readonly nonce: string } | null {
  if (!path.startsWith(STREAM_PATH_PREFIX)) return null;
  const match = /^(0|[1-9]\d{0,8})\?nonce=([0-9a-f]{32})$/.exec(path.slice(STREAM_PATH_PREFIX.length));
  if (match === null) return null;
  return { shard: Number(match[1]), nonce: match[2]! };
}

/**
 * The session key of one stream: HMAC-SHA256 under the cluster key of both nonces and the path.
 * The standby's nonce is fresh per upgrade, so a replayed upgrade request gets a session whose
 * frames its sender cannot sign.
 */
export function sessionKey(clusterKey: Buffer, path: string, leaderNonce: string, standbyNonce: string): Buffer {
  return createHmac("sha256", clusterKey).update(`leasehold-replication-stream-v1\n${path}\n${leaderNonce}\n${standbyNonce}`).digest();
}

/** The byte a frame's MAC covers first: its direction (then its number, then its payload: frame-mac.ts). */
function directionByte(direction: FrameDirection): number {
  return direction === "to-standby" ? 1 : 2;
}

/** Writes one direction's frames, numbering them. */
export class FrameWriter {
  private counter = 0;
  private readonly direction: number;
  private readonly mac: FrameMac;
  constructor(key: Buffer, direction: FrameDirection) {
    this.direction = directionByte(direction);
    this.mac = new FrameMac(key);
  }

  /** The frame of `value` (JSON), the next in this direction: one buffer, the payload encoded in place. */
  frame(value: unknown): Buffer {
    const text = JSON.stringify(value);
    const bytes = Buffer.byteLength(text, "utf8");
    const frame = Buffer.allocUnsafe(HEADER_BYTES + bytes);
    frame.write(text, HEADER_BYTES, "utf8");
    frame.writeUInt32BE(MAC_BYTES + bytes, 0);
    frame.write(this.mac.of(this.direction, this.counter++, frame, HEADER_BYTES, frame.length), 4, "latin1");
    return frame;
  }
}

/** A frame that failed: too large, a wrong MAC, or a payload that is not JSON. */
export class FrameError extends Error {
  override name = "FrameError";
}

/**
 * Reads one direction's frames from a byte stream: {@link push} takes each chunk and answers the
 * decoded payloads it completed, in order. A frame larger than `maxFrameBytes`, one whose MAC is
 * wrong (not from the session's holder, or out of order) or whose payload is not JSON sets
 * {@link failure}: `push` answers the frames before it, and nothing after (the stream is over).
 */
export class FrameReader {
  /** Why the stream failed its check, `null` while it has not. */
  failure: FrameError | null = null;
  private buffered: Buffer[] = [];
  private bufferedBytes = 0;
  private counter = 0;
  private readonly direction: number;
  private readonly mac: FrameMac;
  /**
   * @param raw Default false. BENCHMARK ONLY (the floor standby, standby-floor.ts): answer each
   * frame's payload bytes, its MAC checked, instead of its decoded JSON.
   */
  constructor(
    key: Buffer,
    direction: FrameDirection,
    private readonly maxFrameBytes: number,
    private readonly raw = false,
  ) {
    this.direction = directionByte(direction);
    this.mac = new FrameMac(key);
  }

  push(chunk: Buffer): unknown[] {
    const out: unknown[] = [];
    if (this.failure !== null) return out;
    try {
      this.decode(chunk, out);
    } catch (err) {
      if (!(err instanceof FrameError)) throw err;
      this.failure = err;
      this.buffered = [];
      this.bufferedBytes = 0;
    }
    return out;
  }

  private decode(chunk: Buffer, out: unknown[]): void {
    // Usually a read holds whole frames: read them where they are. Otherwise the bytes wait in
    // `buffered` (without copying each chunk again) until the frame they begin is complete.
    let data = chunk;
    if (this.bufferedBytes > 0) {
      this.buffered.push(chunk);
      this.bufferedBytes += chunk.length;
      if (this.bufferedBytes < 4) return;
      if (this.buffered[0]!.length < 4) this.buffered = [Buffer.concat(this.buffered)];
      if (this.bufferedBytes < 4 + this.frameLength(this.buffered[0]!, 0)) return;
      data = Buffer.concat(this.buffered, this.bufferedBytes);
      this.buffered = [];
      this.bufferedBytes = 0;
    }
    let at = 0;
    while (data.length - at >= 4) {
      const end = at + 4 + this.frameLength(data, at);
      if (data.length < end) break;
      const start = at + HEADER_BYTES;
      if (!macEquals(this.mac.of(this.direction, this.counter, data, start, end), data, at + 4)) {
        throw new FrameError(`frame ${this.counter} is not signed with the session key`);
      }
      this.counter++;
      if (this.raw) {
        out.push(data.subarray(start, end));
        at = end;
        continue;
      }
      try {
        out.push(JSON.parse(data.toString("utf8", start, end)));
      } catch {
        throw new FrameError(`frame ${this.counter - 1} is not JSON`);
      }
      at = end;
    }
    if (at < data.length) {
      this.buffered = [at === 0 ? data : data.subarray(at)];
      this.bufferedBytes = data.length - at;
    }
  }

  /** The length field of the frame at `at` (its MAC and payload), checked against the largest frame. */
  private frameLength(data: Buffer, at: number): number {
    const length = data.readUInt32BE(at);
    if (length < MAC_BYTES || length > this.maxFrameBytes + MAC_BYTES) throw new FrameError(`a frame of ${length} bytes (at most ${this.maxFrameBytes + MAC_BYTES})`);
    return length;
  }
}
