import { describe, expect, it } from "vitest";
import {
  ERROR_STATUS,
  LeaseholdError,
  namespaceLocksPath,
  namespacesPath,
  parseNamespaceLocksQuery,
  parseNamespacesQuery,
  requestValidators,
  responseValidators,
  revokePath,
} from "../src/index.js";

const q = (text: string) => new URLSearchParams(text);
function problemPath(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    if (err instanceof LeaseholdError && err.code === "INVALID_ARGUMENT") return err.details.path;
    throw err;
  }
  throw new Error("did not throw");
}

describe("inspection queries", () => {
  it("parses defaults and every parameter", () => {
    expect(parseNamespaceLocksQuery(q(""))).toEqual({ view: "descriptors", prefix: undefined, contended: false, cursor: undefined, limit: 100 });
    expect(parseNamespaceLocksQuery(q("view=descriptors&prefix=orders%00&contended=true&cursor=orders%00o-9&limit=1000"))).toEqual({
      view: "descriptors",
      prefix: "orders\u0000",
      contended: true,
      cursor: "orders\u0000o-9",
      limit: 1000,
    });
    expect(parseNamespaceLocksQuery(q("view=immutable&cursor=42")).cursor).toBe("42");
    expect(parseNamespacesQuery(q("cursor=billing&limit=5"))).toEqual({ cursor: "billing", limit: 5 });
    expect(parseNamespacesQuery(q(""))).toEqual({ cursor: undefined, limit: 1000 });
  });

  it("names the parameter of every mistake", () => {
    const cases: [string, string][] = [
      ["limit=0", "query.limit"],
      ["limit=1.5", "query.limit"],
      ["limit=", "query.limit"],
      ["view=table", "query.view"],
      ["contended=1", "query.contended"],
      ["view=immutable&contended=false", "query.contended"],
      ["view=immutable&prefix=a", "query.prefix"],
      [`prefix=${"x".repeat(1025)}`, "query.prefix"],
      ["view=watchers&cursor=abc", "query.cursor"],
      ["view=immutable&cursor=99999999999999999", "query.cursor"],
      ["limit=1&limit=1", "query.limit"],
      ["sort=asc", "query.sort"],
    ];
    for (const [text, path] of cases) expect(problemPath(() => parseNamespaceLocksQuery(q(text))), text).toBe(path);
    expect(problemPath(() => parseNamespacesQuery(q("cursor=-x")))).toBe("query.cursor");
    expect(problemPath(() => parseNamespacesQuery(q("view=all")))).toBe("query.view");
  });

  it("builds paths that the parsers read back", () => {
    expect(namespacesPath()).toBe("/v1/namespaces");
    expect(namespacesPath({ cursor: "a", limit: 2 })).toBe("/v1/namespaces?cursor=a&limit=2");
    const path = namespaceLocksPath("billing", { prefix: "inv ö&", contended: true, limit: 10 });
    expect(path.startsWith("/v1/namespaces/billing/locks?")).toBe(true);
    expect(parseNamespaceLocksQuery(new URLSearchParams(path.slice(path.indexOf("?") + 1)))).toMatchObject({ prefix: "inv ö&", contended: true, limit: 10 });
    expect(revokePath("a.b")).toBe("/v1/namespaces/a.b/revoke");
  });
});

describe("revoke bodies and inspection answers", () => {
  it("accepts exactly one of fingerprints or descriptors", () => {
    expect(requestValidators.revoke.parse({ fingerprints: ["0123456789abcdef"], reason: "x" })).toBeTruthy();
    expect(requestValidators.revoke.parse({ descriptors: ["a"] })).toBeTruthy();
    expect(problemPath(() => requestValidators.revoke.parse({}))).toBe("fingerprints");
    expect(problemPath(() => requestValidators.revoke.parse({ fingerprints: ["0123456789abcdef"], descriptors: ["a"] }))).toBe("descriptors");
    expect(problemPath(() => requestValidators.revoke.parse({ fingerprints: ["0123456789ABCDEF"] }))).toBe("fingerprints[0]");
    expect(problemPath(() => requestValidators.revoke.parse({ descriptors: ["a", "\ud800"] }))).toBe("descriptors[1]");
    expect(() => requestValidators.revoke.parse({ fingerprints: ["short"] })).toThrow(/16 lower-case hexadecimal digits/);
  });

  it("validates the answers of the documented examples, and PERMISSION_DENIED travels as 403", () => {
    const summary = { namespace: "billing", heldLocks: 1, heldTokens: 1, waitingRequests: 0, immutableTimestampLocks: 0, oldestHoldMs: 5 };
    expect(responseValidators.namespaces.check({ namespaces: [summary], nextCursor: "billing" })).toBe(true);
    expect(
      responseValidators.locks.check({
        namespace: "billing",
        view: "descriptors",
        summary,
        descriptors: [
          {
            descriptor: "inv",
            holderCount: 1,
            holders: [{ mode: "exclusive", fencingToken: 3, fingerprint: "3f9a0c1d5e7b2a48", heldForMs: 1, leaseLeftMs: 2 }],
            queueLength: 0,
            waiters: [],
            watchers: 0,
          },
        ],
      }),
    ).toBe(true);
    // A token where a fingerprint belongs is refused: answers never carry tokens.
    expect(responseValidators.locks.check({ namespace: "b", view: "immutable", summary, immutableTimestampLocks: [{ startTimestamp: 1, fingerprint: "wVodD7-hG12yMZzgd6QKCk5p", heldForMs: 0, leaseLeftMs: 0 }] })).toBe(false);
    expect(responseValidators.revoke.check({ revoked: [{ fingerprint: "3f9a0c1d5e7b2a48", descriptors: ["inv"], heldForMs: 5 }], notFound: [] })).toBe(true);
    expect(ERROR_STATUS.PERMISSION_DENIED).toBe(403);
  });
});
