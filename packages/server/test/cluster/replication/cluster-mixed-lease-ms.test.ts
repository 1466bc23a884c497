import type { LockResponse } from "@leasehold/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { startCli, type CliProcess } from "../../support/cli-process.js";
import { sleep, waitFor } from "../../support/wait-for.js";
import { cliSchemaPerTest } from "../cli-schema-per-test.js";
import { ledBy, namespaceLedBy, op, settled } from "../cluster-support.js";
import { rowsUntil } from "./replicated-cli.js";

const LEADER_LEASE_MS = 1_000;
/** a's lease: the holders it answers are promised validForMs 10 s. */
const A_LEASE_MS = 20_000;
/** b's own lease (validForMs 1 s): shorter than what a promised. */
const B_LEASE_MS = 2_000;

describe("cluster CLI with --replicas 1 and members of different --lease-ms: a SIGTERM hand-over", () => {
  const bed = cliSchemaPerTest();
  afterEach(() => {
    delete process.env.LEASEHOLD_TEST_BREAK;
    delete process.env.LEASEHOLD_TEST_HAND_OVER_PAUSE_MS;
  });

  /** A server of the one-shard cluster with its own `--lease-ms`; `env` (TEST ONLY knobs) switches the test knobs on. */
  async function server(id: string, leaseMs: number, env: Record<string, string> = {}): Promise<CliProcess> {
    const knobs = Object.keys(env).length === 0 ? ["--log-level", "info"] : ["--log-level", "debug", "--unsafe-test-knobs"];
    // The child inherits the environment at spawn time.
    Object.assign(process.env, env);
    try {
      const started = await startCli([
        "--port", "0",
        "--cluster", bed.schema.connectionString,
        "--leader-lease-ms", String(LEADER_LEASE_MS),
        "--shards", "1",
        "--lease-ms", String(leaseMs),
        "--replicas", "1",
        "--server-id", id,
        ...knobs,
      ]);
      bed.running.push(started);
      return started;
    } finally {
      for (const name of Object.keys(env)) delete process.env[name];
    }
  }

  /** a leads the shard and holds `x` for a client (validForMs 10 s); b is its in-sync standby. */
  async function heldThenStandby(aEnv: Record<string, string> = {}, bEnv: Record<string, string> = {}) {
    const a = await server("mix-a", A_LEASE_MS, aEnv);
    const first = await settled([a.url], 20_000, (m) => ledBy(m, a.url) === 1);
    const ns = namespaceLedBy(first, a.url);
    const held = (await op(a.url, ns, "lock", { locks: [{ descriptor: "x", mode: "exclusive" }], acquireTimeoutMs: 0 })).json as LockResponse;
    if (held.status !== "acquired") throw new Error(`a did not grant: ${JSON.stringify(held)}`);
    expect(held.lease.validForMs).toBe(A_LEASE_MS / 2);
    const b = await server("mix-b", B_LEASE_MS, bEnv);
    await rowsUntil(bed, "b in sync as a's standby", (rows) => rows[0]?.in_sync === true);
    return { a, b, ns };
  }

  /** Poll shard 0's row until it no longer names a: answers whether it was ever seen expired while it did. */
  async function expiredWhileNamingA(): Promise<boolean> {
    let expired = false;
    const deadline = Date.now() + 4 * LEADER_LEASE_MS;
    while (Date.now() < deadline) {
      const [row] = await bed.schema.query<{ holder: string | null; live: boolean }>("SELECT holder, expires_at > clock_timestamp() AS live FROM leases WHERE shard = 0");
      if (row?.holder !== "mix-a") break;
      if (!row.live) expired = true;
      await sleep(50);
    }
    return expired;
  }

  /**
   * a's SIGTERM hand-over pauses 2.5 leader leases between the final acknowledgement and the row
   * move (LEASEHOLD_TEST_HAND_OVER_PAUSE_MS, a slow database's stand-in); `breaks` (TEST ONLY) go
   * to a and b. Answers whether the row expired under the hand-over, how b took the shard, and
   * what another client's lock on `x` gets at b 3 s later (past b's own 2 s lease).
   */
  async function slowHandOver(breaks: { readonly a?: string; readonly b?: string } = {}) {
    const pause = { LEASEHOLD_TEST_HAND_OVER_PAUSE_MS: String(Math.round(2.5 * LEADER_LEASE_MS)) };
    const { a, b, ns } = await heldThenStandby(
      { ...pause, ...(breaks.a === undefined ? {} : { LEASEHOLD_TEST_BREAK: breaks.a }) },
      breaks.b === undefined ? {} : { LEASEHOLD_TEST_BREAK: breaks.b },
    );
    a.child.kill("SIGTERM");
    const expired = await expiredWhileNamingA();
    await waitFor(() => b.lines.some((l) => l.msg === "shard acquired"), "b taking the shard", 20_000);
    const acquired = b.lines.find((l) => l.msg === "shard acquired")!;
    await sleep(B_LEASE_MS + 1_000);
    const contended = ((await op(b.url, ns, "lock", { locks: [{ descriptor: "x", mode: "exclusive" }], acquireTimeoutMs: 0 })).json as LockResponse).status;
    return { expired, reason: acquired.reason, contended };
  }

  // One run for both rules, to keep the suite short; each rule's negative control runs at unit
  // level (carried-lease-restart.test.ts, renew-handing-over.test.ts).
  it("a keeps renewing the row until it moved (it never expires under the slow hand-over), and b keeps the holder's lock for the 10 s a promised, past its own 2 s lease", async () => {
    const { expired, reason, contended } = await slowHandOver();
    expect(expired).toBe(false);
    expect(reason).toBe("handed over");
    expect(contended).not.toBe("acquired");
  }, 45_000);
});
