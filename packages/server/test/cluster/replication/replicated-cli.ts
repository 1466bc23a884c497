import type { RefreshResponse } from "@leasehold/protocol";
import { expect } from "vitest";
import { startCli, type CliProcess } from "../../support/cli-process.js";
import { rawRequest } from "../../support/raw-request.js";
import { sleep } from "../../support/wait-for.js";
import type { cliSchemaPerTest } from "../cli-schema-per-test.js";
import { ledBy, namespaceLedBy, op, settled } from "../cluster-support.js";

/** The test bed of `cliSchemaPerTest`. */
type Bed = ReturnType<typeof cliSchemaPerTest>;

/** A lease row as these tests read it. */
export type StandbyRow = { shard: number; holder: string | null; leader_id: string | null; standby_id: string | null; in_sync: boolean; epoch: string };

/** Settings of the servers of one test file. */
export interface ReplicatedCliSettings {
  readonly leaderLeaseMs: number;
  readonly shards: number;
  /** Long, so that a new leader without the table would wait seconds (`validForMs`) before a grant. */
  readonly leaseMs: number;
}

/**
 * A starter of CLI servers with `--replicas 1` on the bed's schema, each pushed to `bed.running`;
 * `unsafeBreak` (TEST ONLY) switches that rule off in the one started (test-breaks.ts); `serverId`
 * fixes its `--server-id` (shares follow the id order); `extra` are more flags (`--advertise-url`).
 */
export function replicatedCli(bed: Bed, settings: ReplicatedCliSettings): (unsafeBreak?: string, serverId?: string, extra?: readonly string[]) => Promise<CliProcess> {
  return async (unsafeBreak, serverId, extra = []) => {
    const knobs = unsafeBreak === undefined ? ["--log-level", "info"] : ["--log-level", "debug", "--unsafe-test-knobs"];
    // The child inherits the environment at spawn time.
    if (unsafeBreak !== undefined) process.env.LEASEHOLD_TEST_BREAK = unsafeBreak;
    try {
      const server = await startCli([
        "--port", "0",
        "--cluster", bed.schema.connectionString,
        "--leader-lease-ms", String(settings.leaderLeaseMs),
        "--shards", String(settings.shards),
        "--lease-ms", String(settings.leaseMs),
        "--replicas", "1",
        ...(serverId === undefined ? [] : ["--server-id", serverId]),
        ...extra,
        ...knobs,
      ]);
      bed.running.push(server);
      return server;
    } finally {
      delete process.env.LEASEHOLD_TEST_BREAK;
    }
  };
}

/** Every lease row, in shard order. */
export function standbyRows(bed: Bed): Promise<StandbyRow[]> {
  return bed.schema.query<StandbyRow>("SELECT shard, holder, leader_id, standby_id, in_sync, epoch FROM leases ORDER BY shard");
}

/** Poll the rows until `condition` holds (20 s at most). */
export async function rowsUntil(bed: Bed, what: string, condition: (rows: StandbyRow[]) => boolean): Promise<StandbyRow[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const rows = await standbyRows(bed);
    if (condition(rows)) return rows;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(rows)}`);
    await sleep(25);
  }
}

/** Refresh `token` at `url` until the shard answers there (421/503 meanwhile); answers the refresh. */
export async function refreshAt(url: string, ns: string, token: string): Promise<RefreshResponse> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const answer = await op(url, ns, "refresh", { tokens: [token] });
    if (answer.status === 200) return answer.json as RefreshResponse;
    expect([421, 503]).toContain(answer.status);
    if (Date.now() > deadline) throw new Error(`no leader for ${ns} at ${url}: ${JSON.stringify(answer.json)}`);
    await sleep(20);
  }
}

/** The value of one sample of `GET /metrics` (`series` as written there, labels included), 0 when absent. */
export async function metricAt(url: string, series: string): Promise<number> {
  const text = (await rawRequest(url, "/metrics", { method: "GET" })).text;
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

/**
 * Two servers on a one-shard cluster: a (started first, `<prefix>-a`) leads the shard, b
 * (`<prefix>-b`) is its in-sync standby. The ids sort in this order, so the shard is a's share and
 * balance never moves it to b. `breaks` (TEST ONLY) are passed to each server's start. Answers both
 * and a namespace of the shard.
 */
export async function leaderWithStandby(bed: Bed, start: ReturnType<typeof replicatedCli>, prefix: string, breaks: { readonly a?: string | undefined; readonly b?: string | undefined } = {}): Promise<{ a: CliProcess; b: CliProcess; ns: string }> {
  const a = await start(breaks.a, `${prefix}-a`);
  await settled([a.url], 20_000, (m) => ledBy(m, a.url) === 1);
  const b = await start(breaks.b, `${prefix}-b`);
  await rowsUntil(bed, "b in sync as a's standby", (rows) => rows[0]?.in_sync === true);
  const map = await settled([a.url, b.url], 20_000, (m) => ledBy(m, a.url) === 1);
  return { a, b, ns: namespaceLedBy(map, a.url) };
}
