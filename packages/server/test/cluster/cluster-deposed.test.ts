import { describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/start-server.js";
import { rawRequest, type RawResponse } from "../support/raw-request.js";
import { sleep } from "../support/wait-for.js";
import { op, settled } from "./cluster-support.js";
import { schemaPerTest } from "./pg-schema.js";

const ex = { locks: [{ descriptor: "d", mode: "exclusive" as const }] };

describe("cluster: a leader whose fenced bound extension matched nothing", () => {
  const bed = schemaPerTest<RunningServer>();

  it("steps down at once: its waiter gets 503 within the test's deadline and shards_lost_total{reason=\"bound\"} counts it", async () => {
    // A long leader lease (renewals keep succeeding: only the bound can depose it) and a block of
    // 100, so a request for 60 numbers starts an extension.
    const server = await startServer({ leaseMs: 5_000, cluster: { connectionString: bed.schema.connectionString, leaderLeaseMs: 3_000, shards: 1, reserveBlock: 100 } });
    bed.open.push(server);
    await settled([server.url]);
    const held = await op(server.url, "deposed", "lock", { ...ex, acquireTimeoutMs: 5_000 });
    expect((held.json as { status: string }).status).toBe("acquired");
    const waiter = op(server.url, "deposed", "lock", { ...ex, acquireTimeoutMs: 20_000 });
    await sleep(50);
    // A newer epoch extended the namespace's bound (as after a takeover this server missed).
    await bed.schema.query("UPDATE bounds SET bound = bound + 1000, epoch = epoch + 1 WHERE namespace = 'deposed'");
    const forced = await op(server.url, "deposed", "timestamps", { count: 60 });
    expect(forced.status).toBe(200);
    const answered = await Promise.race([waiter, sleep(3_000).then((): RawResponse | null => null)]);
    expect(answered, "the waiter was not answered within 3 s: the deposed leader kept serving").not.toBeNull();
    expect(answered!.status).toBe(503);
    expect((answered!.json as { error: { message: string } }).error.message).toMatch(/stopped leading shard 0 \(the bound of namespace "deposed" was extended by epoch 2/);
    const metrics = (await rawRequest(server.url, "/metrics", { method: "GET" })).text;
    expect(metrics).toMatch(/^leasehold_cluster_shards_lost_total\{reason="bound"\} 1$/m);
  });
});
