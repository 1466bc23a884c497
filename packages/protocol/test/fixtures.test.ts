import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Value } from "@sinclair/typebox/value";
import {
  LockBatchGrantLineSchema,
  LockBatchLeaseLineSchema,
  LockBatchRequestSchema,
  requestValidators,
  responseValidators,
  type AnyOperation,
} from "../src/index.js";

/** The lines only a compact `lock-batch` answer holds, by fixture name, with their schemas. */
const compactLines = {
  "lock-batch.response.line-lease.json": LockBatchLeaseLineSchema,
  "lock-batch.response.line-grant.json": LockBatchGrantLineSchema,
} as const;

const dir = join(import.meta.dirname, "fixtures");
const files = readdirSync(dir).filter((f) => f.endsWith(".json"));

const operationOf: Record<string, AnyOperation | "health" | "cluster" | "cluster-members" | "error" | "namespaces" | "locks" | "revoke" | "events"> = {
  lock: "lock",
  unlock: "unlock",
  refresh: "refresh",
  timestamps: "timestamps",
  "transactions-start": "transactions/start",
  "immutable-timestamp": "immutable-timestamp",
  "lock-batch": "lock-batch",
  "lock-cancel": "lock-cancel",
  health: "health",
  "health-cluster": "health",
  cluster: "cluster",
  "cluster-members": "cluster-members",
  error: "error",
  namespaces: "namespaces",
  locks: "locks",
  revoke: "revoke",
  events: "events",
  "wait-for-locks": "wait-for-locks",
  "timestamp-leases": "timestamp-leases",
  "timestamp-leases-min": "timestamp-leases/min",
};

describe("golden fixtures", () => {
  it("cover a request and an answer for every operation", () => {
    for (const op of ["lock", "unlock", "refresh", "timestamps", "transactions-start", "immutable-timestamp", "lock-batch", "lock-cancel", "wait-for-locks", "timestamp-leases", "timestamp-leases-min"]) {
      expect(files).toContain(`${op}.request.json`);
      expect(files.some((f) => f.startsWith(`${op}.response`))).toBe(true);
    }
    expect(files).toContain("lock.response.timeout.json");
    for (const line of ["acquired", "timeout", "error", "cancelled", "lease", "grant"]) expect(files).toContain(`lock-batch.response.line-${line}.json`);
    expect(files).toContain("lock-batch.request.compact.json");
    expect(files).toContain("health.response.json");
    expect(files).toContain("health-cluster.response.json");
    expect(files).toContain("cluster.response.json");
    expect(files).toContain("cluster-members.response.json");
    expect(files).toContain("error.response.json");
    expect(files).toContain("error.response.permission-denied.json");
    for (const view of ["descriptors", "watchers", "immutable"]) expect(files).toContain(`locks.response.${view}.json`);
    for (const file of ["namespaces.response.json", "revoke.request.json", "revoke.request.descriptors.json", "revoke.response.json", "events.response.json"]) {
      expect(files).toContain(file);
    }
  });

  for (const file of files) {
    it(`${file} matches its schema`, () => {
      const [name, kind] = file.split(".") as [string, string];
      const op = operationOf[name];
      expect(op, `no operation for ${file}`).toBeDefined();
      const body: unknown = JSON.parse(readFileSync(join(dir, file), "utf8"));
      if (kind === "request") {
        const validator = requestValidators[op as keyof typeof requestValidators];
        expect(validator.parse(body)).toEqual(body);
      } else if (file in compactLines) {
        expect(Value.Check(compactLines[file as keyof typeof compactLines], body)).toBe(true);
        expect(responseValidators["lock-batch"].check(body)).toBe(false);
      } else {
        const validator = responseValidators[op as keyof typeof responseValidators];
        expect(validator.check(body)).toBe(true);
      }
    });
  }

  it.each(["lock-batch.request.json", "lock-batch.request.compact.json"])("the %s fixture also matches the typed schema: every entry is a lock request", (file) => {
    const body: unknown = JSON.parse(readFileSync(join(dir, file), "utf8"));
    expect(Value.Check(LockBatchRequestSchema, body)).toBe(true);
    const entries = (body as { requests: unknown[] }).requests;
    for (const entry of entries) expect(requestValidators.lock.parse(entry)).toEqual(entry);
  });

  it("compact must be a boolean", () => {
    expect(() => requestValidators["lock-batch"].parse({ requests: [{}], compact: "yes" })).toThrow(/compact must be a boolean, true or false \(got string "yes"\)/);
  });

  it("a lock-batch line needs exactly one of result and error, and an index", () => {
    const line = responseValidators["lock-batch"];
    expect(line.check({ index: 0, result: { status: "timeout" } })).toBe(true);
    expect(line.check({ result: { status: "timeout" } })).toBe(false);
    expect(line.check({ index: 0 })).toBe(false);
    expect(line.check({ index: 0, result: { status: "timeout" }, error: { code: "X", message: "", details: {} } })).toBe(false);
    expect(line.check({ index: -1, result: { status: "timeout" } })).toBe(false);
  });

  it("a fixture with one field removed or renamed no longer validates (the check can fail)", () => {
    const body = JSON.parse(readFileSync(join(dir, "lock.response.acquired.json"), "utf8")) as Record<string, unknown>;
    const { token: _token, ...withoutToken } = body;
    expect(responseValidators.lock.check(withoutToken)).toBe(false);
    expect(responseValidators.lock.check({ ...body, tokn: "x" })).toBe(false);
  });
});
