import { describe, expect, it } from "vitest";
import { newClusterKey, signRequest, verifyBody, verifyHeader } from "../../../src/cluster/replication/cluster-key.js";

const body = Buffer.from('{"kind":"entries"}');
const path = "/v1/internal/replication/3";

describe("cluster key signatures", () => {
  it("a request signed with the key verifies, header first and then its body", () => {
    const key = newClusterKey();
    expect(key.length).toBe(32);
    const header = signRequest(key, { method: "POST", path, body }, 1_000_000);
    expect(header).not.toContain(key.toString("hex"));
    const verified = verifyHeader(key, header, "POST", path, 1_000_500);
    expect(typeof verified).toBe("object");
    if (typeof verified === "string") throw new Error(verified);
    expect(verifyBody(verified, body)).toBe(true);
    expect(verifyBody(verified, Buffer.from('{"kind":"snapshot"}'))).toBe(false);
  });

  it("refuses a missing, malformed, stale, wrongly keyed or re-targeted signature", () => {
    const key = newClusterKey();
    const header = signRequest(key, { method: "POST", path, body }, 1_000_000);
    expect(verifyHeader(key, undefined, "POST", path, 1_000_000)).toBe("missing");
    expect(verifyHeader(key, "Bearer abc", "POST", path, 1_000_000)).toBe("malformed");
    expect(verifyHeader(key, [header, header], "POST", path, 1_000_000)).toBe("malformed");
    expect(verifyHeader(key, header, "POST", path, 1_000_000 + 30_001)).toBe("stale");
    expect(verifyHeader(newClusterKey(), header, "POST", path, 1_000_000)).toBe("signature");
    expect(verifyHeader(key, header, "POST", "/v1/internal/replication/4", 1_000_000)).toBe("signature");
    expect(verifyHeader(key, header, "PUT", path, 1_000_000)).toBe("signature");
  });
});
