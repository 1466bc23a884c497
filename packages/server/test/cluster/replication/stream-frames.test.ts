import { createHmac, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { FrameMac } from "../../../src/cluster/replication/frame-mac.js";
import { FrameReader, FrameWriter } from "../../../src/cluster/replication/stream-frames.js";

/** OpenSSL's MAC of frame `counter` to the standby, as the stream's format defines it. */
function expectedMac(key: Buffer, counter: number, payload: Buffer): Buffer {
  const prefix = Buffer.alloc(9);
  prefix.writeUInt8(1, 0);
  prefix.writeBigUInt64BE(BigInt(counter), 1);
  return createHmac("sha256", key).update(prefix).update(payload).digest();
}

describe("stream frames", () => {
  // An acknowledgement, a lone grant's size, multi-byte text, and frames past 2 KiB and 64 KiB: any
  // cheaper MAC tried for small frames must still give the format's MAC for each.
  const values = [{ ackedSeq: 7 }, { text: "x".repeat(600) }, { text: "é".repeat(1_100) }, { text: "y".repeat(2_100) }, { text: "z".repeat(70_000) }];

  it("signs every frame, small or large, with HMAC-SHA256 of direction, number and payload; the reader takes them in order", () => {
    const key = randomBytes(32);
    const writer = new FrameWriter(key, "to-standby");
    const reader = new FrameReader(key, "to-standby", 1 << 20);
    values.forEach((value, counter) => {
      const frame = writer.frame(value);
      const payload = frame.subarray(36);
      expect(frame.readUInt32BE(0)).toBe(32 + payload.length);
      expect(frame.subarray(4, 36).equals(expectedMac(key, counter, payload))).toBe(true);
      expect(reader.push(frame)).toEqual([value]);
    });
    expect(reader.failure).toBeNull();
  });

  it("refuses a frame with one payload byte changed, small or large (negative control of the MAC)", () => {
    for (const value of values) {
      const key = randomBytes(32);
      const frame = new FrameWriter(key, "to-standby").frame(value);
      frame[frame.length - 2]! ^= 0x01;
      const reader = new FrameReader(key, "to-standby", 1 << 20);
      expect(reader.push(frame)).toEqual([]);
      expect(reader.failure?.message).toMatch(/not signed with the session key/);
    }
  });

  it("reads the same frames however the bytes are cut into reads: several in one read, one split over many, a header split", () => {
    const key = randomBytes(32);
    const writer = new FrameWriter(key, "to-standby");
    const bytes = Buffer.concat(values.map((value) => writer.frame(value)));
    for (const cut of [1, 3, 37, 500, 4_099, 70_001, bytes.length]) {
      const reader = new FrameReader(key, "to-standby", 1 << 20);
      const got: unknown[] = [];
      for (let at = 0; at < bytes.length; at += cut) got.push(...reader.push(bytes.subarray(at, at + cut)));
      expect(got).toEqual(values);
      expect(reader.failure).toBeNull();
    }
  });

  it("refuses a frame longer than the largest allowed as soon as its length is read, and reads nothing after a failure", () => {
    const key = randomBytes(32);
    const writer = new FrameWriter(key, "to-standby");
    const small = writer.frame({ ackedSeq: 1 });
    const large = writer.frame({ text: "x".repeat(2_000) });
    const reader = new FrameReader(key, "to-standby", 1_000);
    expect(reader.push(Buffer.concat([small, large.subarray(0, 4)]))).toEqual([{ ackedSeq: 1 }]);
    expect(reader.failure?.message).toMatch(/a frame of \d+ bytes \(at most 1032\)/);
    expect(reader.push(large.subarray(4))).toEqual([]);
  });

  it("computes OpenSSL's HMAC-SHA256 for frame numbers past 2^32, either direction, payloads that grow, and keys longer than a block", () => {
    for (const key of [randomBytes(32), randomBytes(100)]) {
      const mac = new FrameMac(key);
      for (const [direction, counter, size] of [[1, 0, 10], [2, 2 ** 32 + 7, 3_000], [1, 2 ** 52 + 1, 40_000], [2, 5, 12]] as const) {
        const bytes = randomBytes(size + 20);
        const prefix = Buffer.alloc(9);
        prefix.writeUInt8(direction, 0);
        prefix.writeBigUInt64BE(BigInt(counter), 1);
        const expected = createHmac("sha256", key).update(prefix).update(bytes.subarray(10, 10 + size)).digest();
        expect(Buffer.from(mac.of(direction, counter, bytes, 10, 10 + size), "latin1").equals(expected)).toBe(true);
      }
    }
  });
});
