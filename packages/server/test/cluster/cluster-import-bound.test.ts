import type { TimestampsResponse } from "@leasehold/protocol";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/start-server.js";
import { runCli } from "../support/cli-process.js";
import { op, settled } from "./cluster-support.js";
import { schemaPerTest } from "./pg-schema.js";

const LEADER_LEASE_MS = 600;
const IMPORTED = 2_500_000;

describe("cluster CLI: import-bound into a running cluster", () => {
  const bed = schemaPerTest<RunningServer>();
  let dir = "";
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "leasehold-import-"));
    writeFileSync(join(dir, "timestamp-bound.json"), JSON.stringify({ version: 1, namespaces: { imported: IMPORTED } }));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const start = async (): Promise<RunningServer> => {
    const server = await startServer({ cluster: { connectionString: bed.schema.connectionString, leaderLeaseMs: LEADER_LEASE_MS, shards: 2 } });
    bed.open.push(server);
    return server;
  };
  const timestamp = async (url: string): Promise<number> => {
    const answer = await op(url, "imported", "timestamps", { count: 1 });
    expect(answer.status).toBe(200);
    return (answer.json as TimestampsResponse).start;
  };
  const storedBound = async (): Promise<string | undefined> => (await bed.schema.query<{ bound: string }>("SELECT bound FROM bounds WHERE namespace = 'imported'"))[0]?.bound;

  it("is refused while the namespace's shard has a live leader (exit 1, the namespace, shard and leader named, nothing imported); with the cluster stopped it imports and the cluster continues above the imported bound", async () => {
    const server = await start();
    await settled([server.url]);
    const before = await timestamp(server.url);
    const storedBefore = await storedBound();

    const refused = await runCli(["import-bound", "--data-dir", dir, "--cluster", bed.schema.connectionString]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/import-bound: refused: namespace "imported" belongs to shard \d, which server "[^"]+" leads now/);
    expect(refused.stderr).toMatch(/Stop every cluster server/);
    expect(refused.stdout).toBe("");
    expect(await storedBound()).toBe(storedBefore);
    // The leader goes on from its own counter, and nothing it hands out is below what it did.
    expect(await timestamp(server.url)).toBeGreaterThan(before);

    // The stopped-cluster path: stop (its shards are released), import, start again.
    await server.close();
    const imported = await runCli(["import-bound", "--data-dir", dir, "--cluster", bed.schema.connectionString]);
    expect(imported.stderr).toBe("");
    expect(imported.code).toBe(0);
    expect(Number(await storedBound())).toBeGreaterThanOrEqual(IMPORTED);
    const again = await start();
    await settled([again.url]);
    expect(await timestamp(again.url)).toBeGreaterThan(IMPORTED);
  }, 30_000);
});
