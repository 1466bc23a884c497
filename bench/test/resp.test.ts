import { describe, expect, it } from "vitest";
import { encodeCommands, RespError, RespReader } from "../src/peers/resp.js";
import { infoFields } from "../src/peers/redis-replica-process.js";

describe("encodeCommands", () => {
  it("writes a lock's SET NX PX and WAIT as two RESP arrays in one buffer", () => {
    const wire = encodeCommands([
      ["SET", "k1", "tok", "NX", "PX", 10_000],
      ["WAIT", 1, 1_000],
    ]).toString();
    expect(wire).toBe("*6\r\n$3\r\nSET\r\n$2\r\nk1\r\n$3\r\ntok\r\n$2\r\nNX\r\n$2\r\nPX\r\n$5\r\n10000\r\n" + "*3\r\n$4\r\nWAIT\r\n$1\r\n1\r\n$4\r\n1000\r\n");
  });

  it("counts bulk string lengths in bytes, not characters", () => {
    expect(encodeCommands([["GET", "é"]]).toString()).toBe("*2\r\n$3\r\nGET\r\n$2\r\né\r\n");
  });
});

describe("RespReader", () => {
  it("reads every reply type in order", () => {
    const reader = new RespReader();
    const replies = reader.push(Buffer.from("+OK\r\n:1\r\n$-1\r\n$5\r\nhello\r\n-ERR no\r\n*2\r\n:3\r\n$0\r\n\r\n"));
    expect(replies.slice(0, 4)).toEqual(["OK", 1, null, "hello"]);
    expect(replies[4]).toBeInstanceOf(RespError);
    expect((replies[4] as RespError).message).toBe("ERR no");
    expect(replies[5]).toEqual([3, ""]);
  });

  it("keeps a partial reply until the rest arrives, byte by byte", () => {
    const reader = new RespReader();
    const wire = Buffer.from("+OK\r\n:1\r\n$12\r\nhello\r\nworld\r\n");
    const seen: unknown[] = [];
    for (let i = 0; i < wire.length; i++) seen.push(...reader.push(wire.subarray(i, i + 1)));
    expect(seen).toEqual(["OK", 1, "hello\r\nworld"]);
  });

  it("answers nothing for an incomplete array, then the whole array", () => {
    const reader = new RespReader();
    expect(reader.push(Buffer.from("*2\r\n:1\r\n"))).toEqual([]);
    expect(reader.push(Buffer.from(":2\r\n"))).toEqual([[1, 2]]);
  });
});

describe("infoFields", () => {
  it("reads INFO replication's fields, skipping the section heading", () => {
    const fields = infoFields("# Replication\r\nrole:master\r\nconnected_slaves:1\r\nslave0:ip=127.0.0.1,port=1,state=online,offset=1,lag=0\r\n");
    expect(fields.get("connected_slaves")).toBe("1");
    expect(fields.get("slave0")).toContain("state=online");
    expect(fields.has("# Replication")).toBe(false);
  });
});
