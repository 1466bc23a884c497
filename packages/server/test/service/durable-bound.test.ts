import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createLockService } from "../../src/service/create-lock-service.js";
import { TIMESTAMP_BOUND_FILE } from "../../src/timestamps/file-timestamp-reserver.js";

const dir = () => mkdtempSync(join(tmpdir(), "leasehold-bound-"));

describe("durable timestamp bound", () => {
  it("a restarted service hands out numbers above everything before, after a clean close", async () => {
    const dataDir = dir();
    const first = createLockService({ dataDir, timestampReserve: 10 });
    const ts = await first.timestamps("ns", { count: 25 });
    const lock = await first.lock("ns", { locks: [{ descriptor: "a", mode: "exclusive" }] });
    await first.close();
    const highest = lock.status === "acquired" ? lock.acquired[0]!.fencingToken : 0;
    expect(highest).toBe(ts.start + 25);
    const second = createLockService({ dataDir, timestampReserve: 10 });
    expect((await second.timestamps("ns", { count: 1 })).start).toBeGreaterThan(highest);
    const again = await second.lock("ns", { locks: [{ descriptor: "a", mode: "exclusive" }] });
    expect(again.status === "acquired" && again.acquired[0]!.fencingToken).toBeGreaterThan(highest);
    await second.close();
  });

  it("survives a crash: a new service on the same directory without close() still resumes above", async () => {
    const dataDir = dir();
    const crashed = createLockService({ dataDir, timestampReserve: 7 });
    let highest = 0;
    for (let i = 0; i < 20; i++) highest = (await crashed.timestamps("ns", { count: 3 })).start + 2;
    const txns = await crashed.startTransactions("other", { count: 5 });
    // No close(): the process "died" here.
    const revived = createLockService({ dataDir, timestampReserve: 7 });
    expect((await revived.timestamps("ns", { count: 1 })).start).toBeGreaterThan(highest);
    expect((await revived.immutableTimestamp("other", {})).immutableTimestamp).toBeGreaterThan(txns.transactions.at(-1)!.startTimestamp);
    expect(revived.snapshot("never-used").nextTimestamp).toBe(1);
    await revived.close();
    await crashed.close();
  });

  it("writes the bound atomically: only the final file remains, and a torn temp file is ignored", async () => {
    const dataDir = dir();
    const service = createLockService({ dataDir, timestampReserve: 1_000 });
    await service.timestamps("ns", { count: 1 });
    await service.close();
    expect(readdirSync(dataDir)).toEqual([TIMESTAMP_BOUND_FILE]);
    const file = JSON.parse(readFileSync(join(dataDir, TIMESTAMP_BOUND_FILE), "utf8")) as { namespaces: Record<string, number> };
    expect(file.namespaces.ns).toBeGreaterThanOrEqual(1_001);
    // A crash mid-write leaves at most a partial temp file beside the intact one.
    writeFileSync(join(dataDir, `.${TIMESTAMP_BOUND_FILE}.tmp`), '{"version":1,"namesp');
    const next = createLockService({ dataDir });
    expect((await next.timestamps("ns", { count: 1 })).start).toBeGreaterThan(1_000);
    await next.close();
    expect(existsSync(join(dataDir, `.${TIMESTAMP_BOUND_FILE}.tmp`))).toBe(false);
  });

  it("refuses to start on a corrupt bound file rather than repeat numbers", () => {
    const dataDir = dir();
    writeFileSync(join(dataDir, TIMESTAMP_BOUND_FILE), "{not json");
    expect(() => createLockService({ dataDir })).toThrow(/refusing to start/);
  });

  it("without a data directory counters start at 1 in every service", async () => {
    const a = createLockService();
    expect((await a.timestamps("ns", { count: 1 })).start).toBe(1);
    await a.close();
  });
});
