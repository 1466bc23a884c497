import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CompactLineReader, responseValidators, type LockRequest } from "@leasehold/protocol";
import { startServer, type RunningServer } from "../../src/start-server.js";
import { uniqueNamespace } from "../support/wait-for.js";
import { BatchStream, exclusive } from "./support/batch-stream.js";
import { postJson } from "./support/post-json.js";

describe("lock-batch with compact: true, over a real socket", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ leaseMs: 4_000 });
  });
  afterAll(async () => {
    await server.close();
  });

  const raw = (batch: BatchStream): unknown[] => batch.lines as unknown[];

  it("answers full grants as one lease line then {index, token, fencingTokens}, and everything else in full", async () => {
    const ns = uniqueNamespace("compact");
    const blocker = await postJson(server.url, ns, "lock", exclusive("busy"));
    expect(blocker.status).toBe(200);
    const requests = [
      exclusive("a"),
      { locks: [{ descriptor: "b", mode: "shared" }, { descriptor: "pool", mode: "permit", limit: 2 }] },
      exclusive("busy", { acquireTimeoutMs: 0 }),
      { locks: [{ descriptor: "busy", mode: "exclusive" }, { descriptor: "c", mode: "exclusive" }], behavior: "as-many-as-possible" },
      { locks: [{ descriptor: "d", mode: "exclusiv" }] },
    ] as unknown as LockRequest[]; // entry 4 is bad input on purpose
    const batch = new BatchStream(server.url, ns, { requests, compact: true });
    await batch.done;
    expect(batch.status).toBe(200);
    const lines = raw(batch);

    const lease = { leaderId: server.service.leaderId, validForMs: expect.any(Number) as number };
    // Exactly one lease line, before the first grant line; five entry lines.
    expect(lines.filter((l) => typeof l === "object" && l !== null && "lease" in l)).toEqual([{ lease }]);
    const leaseAt = lines.findIndex((l) => typeof l === "object" && l !== null && "lease" in l);
    const grants = lines.filter((l) => typeof l === "object" && l !== null && "token" in l) as { index: number; token: string; fencingTokens: number[] }[];
    expect(grants.map((g) => g.index).sort()).toEqual([0, 1]);
    for (const g of grants) {
      expect(lines.indexOf(g)).toBeGreaterThan(leaseAt);
      expect(Object.keys(g).sort()).toEqual(["fencingTokens", "index", "token"]);
      expect(g.fencingTokens).toHaveLength(requests[g.index]!.locks.length);
    }
    const byIndex = new Map(lines.filter((l): l is { index: number } => typeof l === "object" && l !== null && "index" in l).map((l) => [l.index, l]));
    expect(byIndex.get(2)).toEqual({ index: 2, result: { status: "timeout" } });
    // A partial as-many-as-possible grant cannot be completed from the request: it is written in full.
    const partial = byIndex.get(3);
    expect(responseValidators["lock-batch"].check(partial)).toBe(true);
    expect(partial).toMatchObject({ index: 3, result: { status: "acquired", acquired: [{ descriptor: "c", mode: "exclusive" }] } });
    expect(byIndex.get(4)).toMatchObject({ index: 4, error: { code: "INVALID_ARGUMENT", details: { path: "locks[0].mode" } } });

    // A reader given the entries gets back full lines: their locks are held with those fencing
    // tokens, and their tokens are the ones that release them.
    const reader = new CompactLineReader(requests);
    const full = lines.map((l) => reader.read(l)).filter((l) => l !== undefined);
    expect(full).toHaveLength(5);
    const snapshot = server.service.snapshot(ns);
    for (const g of grants) {
      const line = full.find((l) => l.index === g.index)!;
      expect(line).toEqual({
        index: g.index,
        result: {
          status: "acquired",
          token: g.token,
          lease,
          acquired: requests[g.index]!.locks.map((spec, i) => ({ descriptor: spec.descriptor, mode: spec.mode, fencingToken: g.fencingTokens[i] })),
        },
      });
      requests[g.index]!.locks.forEach((spec, i) => {
        const held = snapshot.descriptors.find((d) => d.descriptor === spec.descriptor)?.holders;
        expect(held).toContainEqual({ mode: spec.mode, fencingToken: g.fencingTokens[i] });
      });
      const unlocked = await postJson(server.url, ns, "unlock", { tokens: [g.token] });
      expect(unlocked.json).toEqual({ unlocked: [g.token] });
    }
  });

  it("without compact, or with compact: false, every line is a full line", async () => {
    for (const compact of [undefined, false]) {
      const ns = uniqueNamespace("compact");
      const batch = new BatchStream(server.url, ns, { requests: [exclusive("a"), exclusive("b")], ...(compact === false && { compact }) });
      const lines = await batch.done;
      expect(lines).toHaveLength(2);
      for (const line of lines) expect(responseValidators["lock-batch"].check(line)).toBe(true);
    }
  });

  it("a compact that is not a boolean fails the whole batch with 400 at path compact, and nothing runs", async () => {
    const ns = uniqueNamespace("compact");
    const batch = new BatchStream(server.url, ns, { requests: [exclusive("a")], compact: "yes" });
    await batch.done;
    expect(batch.status).toBe(400);
    expect(batch.errorBody).toMatchObject({ error: { code: "INVALID_ARGUMENT", details: { path: "compact" } } });
    expect((batch.errorBody as { error: { message: string } }).error.message).toMatch(/compact must be a boolean/);
    const again = await postJson(server.url, ns, "lock", exclusive("a"));
    expect(again.status).toBe(200);
    expect((again.json as { status: string }).status).toBe("acquired");
  });
});
