/**
 * Issue 29 item 3: a crash of one of three servers was followed by a balance hand-over to the dead
 * server (its heartbeat row still fresh, an earlier cumulative acknowledgement taken for the final
 * one), and every lock on the moved shards was lost. Three CLI servers as the issue ran them
 * (`--leader-lease-ms 1500 --lease-ms 8000`, 64 shards, `--replicas 1`), a held lock in each of 12
 * namespaces refreshed every second under a light load; SIGKILL of a random server, restarted,
 * repeated: quick mode 2 kills, soak mode (`pnpm test:soak`) 20. Needs `pnpm build` and PostgreSQL.
 */
import { afterAll, describe, expect, it } from "vitest";
import { NO_LOCK_LOST_CHECK } from "../../src/cluster/check-no-lock-lost.js";
import { runRepeatedCrash, type RepeatedCrashResult } from "../../src/cluster/repeated-crash.js";
import { repeatedCrashSection } from "../../src/cluster/repeated-crash-report.js";
import { SOAK, WRITE_REPORT, describeMachine, sized, writeSection } from "../../src/report/index.js";

/** Seed of every random choice; printed in failures. `LEASEHOLD_SEED` replays one. */
const seed = Number(process.env.LEASEHOLD_SEED ?? Date.now() % 2 ** 31);
const startedAt = performance.now();

let main: RepeatedCrashResult | undefined;
let control: RepeatedCrashResult | undefined;

afterAll(() => {
  if (!WRITE_REPORT || main === undefined) return;
  writeSection(repeatedCrashSection(main, control, { mode: SOAK ? "soak" : "quick", date: new Date().toISOString(), machine: describeMachine(), seconds: (performance.now() - startedAt) / 1000 }));
});

describe("cluster: one of three servers killed again and again with held locks (issue 29 item 3)", () => {
  it(
    `${sized(2, 20)} SIGKILLs of one of three servers, each restarted: no held lock lost, every held descriptor stays with its first holder`,
    async () => {
      const kills = sized(2, 20);
      const run = (main = await runRepeatedCrash({ seed, kills, leaderLeaseMs: 1_500, leaseMs: 8_000, shards: 64, namespaces: 12, loadNamespaces: 6, quietMs: SOAK ? 3_000 : 1_500 }));
      const summary = {
        seed,
        kills: run.cycles.length,
        wholeAfterMs: run.cycles.map((c) => Math.round(c.wholeAfterMs)),
        victimLed: run.cycles.map((c) => c.led),
        handedToDead: run.cycles.map((c) => c.handedToDead),
        movesToDead: run.cycles.map((c) => c.movesToDead),
        holdsChecked: run.noLockLost.checked,
        keptThroughFailure: run.noLockLost.keptThroughFailure,
        locksLost: run.noLockLost.losses,
        lapses: run.noLockLost.lapses,
        heldThroughout: run.heldThroughout,
        probes: run.probes,
        secondHolders: run.secondHolders,
        gateClosures: run.gateClosures,
        handOversKept: run.handOversKept,
        handOversReleased: run.handOversReleased,
        seconds: Math.round(run.elapsedMs / 1000),
      };
      console.log(`repeated crash: ${JSON.stringify(summary)}`);
      if (run.evidencePath !== undefined) console.log(`repeated crash: failure evidence in ${run.evidencePath}`);
      expect(run.cycles).toHaveLength(kills);
      expect(run.violations.total, `seed ${seed} ${JSON.stringify(summary)}\nevidence: ${run.evidencePath}\n${run.violations.describe()}`).toBe(0);
      // Not vacuous: the held locks lived through the kills.
      expect(run.noLockLost.keptThroughFailure).toBeGreaterThanOrEqual(12);
      expect(run.heldThroughout).toBe(12);
      expect(run.secondHolders).toBe(0);
      // The rules themselves: no balance move towards a dead member, no hand-over releasing a shard.
      expect(run.cycles.map((c) => c.movesToDead)).toEqual(run.cycles.map(() => 0));
      expect(run.handOversReleased).toBe(0);
      expect(run.probes).toBeGreaterThan(0);
    },
    sized(240_000, 1_800_000),
  );

  // Both rules removed, the cluster is as issue 29 found it: survivors balance shards to the dead
  // server and hand them over on an earlier acknowledgement, and locks are lost. Soak mode only
  // (or LEASEHOLD_CONTROLS=1): it costs a cluster of its own, and whether a held lock's shard is
  // among those moved to the dead server is up to timing, so it needs several kills.
  it.runIf(SOAK || process.env.LEASEHOLD_CONTROLS === "1")(
    "negative control (LEASEHOLD_TEST_BREAK=balance-to-silent-member,hand-over-stale-ack): shards are handed to the dead server and held locks are lost",
    async () => {
      const run = (control = await runRepeatedCrash({
        seed: seed + 1,
        kills: 5,
        leaderLeaseMs: 1_500,
        leaseMs: 8_000,
        shards: 64,
        namespaces: 12,
        loadNamespaces: 6,
        quietMs: 1_500,
        testBreak: "balance-to-silent-member,hand-over-stale-ack",
      }));
      const summary = { handedToDead: run.cycles.map((c) => c.handedToDead), locksLost: run.noLockLost.losses, heldThroughout: run.heldThroughout };
      console.log(`repeated crash, negative control: ${JSON.stringify(summary)}`);
      expect(run.cycles.reduce((n, c) => n + c.handedToDead, 0)).toBeGreaterThan(0);
      expect(run.violations.count(NO_LOCK_LOST_CHECK)).toBeGreaterThan(0);
    },
    600_000,
  );
});
