import { describe, expect, it } from "vitest";
import type { TestBreak } from "@leasehold/server/internal";
import { runSeed } from "../src/sim-run.js";

/**
 * Seeds on which `pnpm sim` once found a violation with every rule in place, each kept as a
 * regression test once fixed: the run of the seed must keep every promise.
 */
const FIXED: readonly { seed: number; finding: string; aimed?: boolean }[] = [
  { seed: 24, finding: "a balance hand-over to a taker cut off from PostgreSQL: it never adopts, the row expires and is taken empty (locks lost)" },
  { seed: 79, finding: "the same, two shards handed to a member whose database path is cut" },
  {
    seed: 71,
    finding:
      "with the former leader named in-sync standby, the taker (its NOTIFY lost) left the handed-over row to that standby as a synced orphan instead of adopting it, and the former leader, its database slow, did not take it over in time",
  },
  { seed: 108, finding: "a standby's takeover term, balanced away before the leader side attached its replicator, was released as if unreplicated, with a lock granted meanwhile (no fault)" },
  { seed: 322, finding: 'a member still running a superseded term of a shard adopted the shard handed to it, started nothing ("led already"), and later released the adopted row with every lock' },
  { seed: 366, finding: "a term acquired after an expiry was handed over for balance inside its lease-wait; the taker served at once and granted a lock the dead leader's client still held (a second holder)" },
  { seed: 73, finding: "a leader whose standby had just crashed lost the answers of two renewals that committed; its gate closed, the term dropped its table, and its pass released its own live row with every lock" },
  {
    seed: 160,
    finding:
      "a rolling restart stopped s1 about 120 ms after s0; s1's rows still named s0's old process in sync, so its stop handed a shard to it, got no acknowledgement and released the shard with its locks",
  },
  {
    seed: 684,
    finding:
      "a rolling restart stopped s2 270 ms after s1's stop handed it a shard; its NOTIFY lost and no pass since, s2 had not adopted the row, which expired once it exited and was taken empty",
  },
  {
    seed: 274,
    finding:
      "a term acquired empty after a crash got an in-sync standby inside its lease-wait; its own leader crashed, and the standby took the shard over with the empty table and no lease-wait, granting a lock the first leader's client still held (a second holder)",
  },
  {
    seed: 364,
    finding: "with a reservation block of 2, a lease lapsing on a timer handed a lock to a waiter whose fencing token needed a bound extension under way: the reserver's 503 escaped from the timer (an uncaught exception, the process dies)",
  },
  {
    seed: 143,
    finding: "a balance hand-over reached s2 as a rolling restart stopped it; the adoption landed after the stop had listed its terms and the starter released the adopted row with its lock",
  },
  { seed: 132, finding: "a taker on a slow database adopted a handed-over shard, its gate closed before a standby came in sync, and the row, still its own, was released with the lock carried" },
  {
    seed: 346,
    finding:
      "a SIGTERM of a protected cluster released a term still inside its lease-wait (\"it granted nothing\"), losing a transaction's immutable-timestamp lock it had granted (transactions/start is served during the wait)",
  },
  {
    seed: 532,
    finding:
      "a balance taker's adoption, its database slow, timed out but committed and cleared the row's standby (the former leader, holding the table); the taker never learned it led, the row expired and was taken empty",
  },
  {
    seed: 760,
    finding:
      "a SIGTERM handed over a term still inside its lease-wait: its held-back lock requests (outside the engine) were not carried, so the taker queued the re-sends in arrival order and granted c2 ahead of c1, queued earlier (queue-order)",
  },
  {
    seed: 3599,
    finding:
      "s1 crashed; s0, shard 2's in-sync standby, lost the answer of a read of the rows and then of its immutable-timestamp record, which its pass awaited before deciding, and s2, past the extra leader lease others leave a standby, took the shard empty (locks lost)",
  },
  {
    seed: 73112,
    finding:
      "s0, leading shard 1, paused; s1, its in-sync standby, lost the answers of two reads of the rows in its takeover window, each failed read followed by a whole pass cadence, and s2 took the shard empty (a transaction's immutable-timestamp lock lost)",
  },
  { seed: 18293, finding: "the same with s0 cut from its database: s2, shard 0's standby, lost two reads' answers and s1 took the shard empty" },
  { seed: 21643, finding: "the same after a crash of s0: s1, shard 0's standby, lost two reads' answers and s2 took the shard empty" },
  { seed: 63666, finding: "the same after a pause of s2: s0 (restarted earlier), shard 1's standby, lost two reads' answers and s1 took the shard empty" },
  { seed: 65771, finding: "the same after a pause of s2: s0, shard 3's standby, lost two reads' answers and s3 took the shard empty" },
  { seed: 69453, finding: "the same after a crash and restart of s3: s2, shard 1's standby, lost two reads' answers and s1 took the shard empty" },
  {
    seed: 50695,
    finding:
      "the checker's own false positive (queue-order): a shared waiter carried by a balance hand-over was granted at the taker when c2's exclusive hold ended, before c1 re-sent; c2's later shared request was granted beside it, and c1 learned of its grant (lower fencing token) only at its re-send",
  },
  {
    seed: 50986,
    finding:
      "a SIGTERM handed shard 0 to its in-sync standby s3, which acknowledged the hand-over entry; the NOTIFY of the row move and the answers of s3's next two reads of the rows were lost, and s1 took the expired row (its standby cleared by the stop) empty",
  },
  {
    seed: 63551,
    finding:
      "the checker's own false positive (queue-order): a stop whose standby crashed 36 ms later counted as a plain SIGTERM; that standby, the hand-over's taker, died with c0's held-back place, and s2, which took over from its replica and never held the place, granted c3's later request first",
  },
  {
    seed: 26958,
    finding:
      "a balance move of shard 2 to s0, its in-sync standby being s1, recorded s1 not in sync first to name s0; the leader s2 crashed as that write went out, and the row, naming no in-sync standby, was taken empty (locks lost)",
  },
  {
    seed: 73939,
    finding:
      "s0's database path cut; s2, shard 2's in-sync standby, lost the answers of two reads of the rows in a row, each costing it a statement timeout and a whole pass interval more, and s1, past the extra leader lease others leave a standby, took the shard empty (locks lost; the same cause as the six lost transactions, fixed with reread-after-cadence)",
  },
  {
    seed: 83550,
    finding:
      "found by session 17's long run after session 18's fixes were written (its code had none of them): a crash of s2 for 1,199 ms lost c3's lock; with reread-after-cadence and balance-sync-unprotected both off the seed replays that run event for event, and either fix alone keeps every promise there",
  },
  {
    seed: 9029,
    finding:
      "a rolling restart's SIGTERM of s1 came 3 ms before s2 moved shard 2 to it for balance: s1's stop read the rows before the row moved to it (its replica acknowledged the hand-over entry about then) and exited without adopting it; s2, kept as its standby, was stopped by the same rolling restart before the row expired, and the shard was taken empty (fixed with stop-ignores-acked-hand-over)",
  },
  {
    seed: 51862,
    finding:
      "s0's balance move of shard 3 to s2 committed but its answer was lost; s2 adopted and resumed its stream to s0, then s0's statement timed out and it kept the table as handed over under a stream of its own, replacing s2's: s2's next entries were refused, its stop found no standby in sync and released the shard with c5's lock (fixed with former-replaces-taker-stream)",
  },
  {
    seed: 28215,
    finding:
      "the checker's own false positive (queue-order), found by session 19's long run: c2's lock request reached s1 while its term's gate was closed by time (s1's service names no leader then), waited in that term, and was granted at the end of the term's lease-wait ahead of c1's, which came 500 ms later; the observer took c2 as arriving when it was granted (sim-service-view.ts now names the term held here, gate open or not)",
  },
  {
    seed: 37203,
    finding:
      "found by session 19's long run: c1's lock request reached s3 once its term's lease-wait was due but before the wait's timer fired; its arrival ended the wait, which started the held-back line for ns-a and dropped it, and c1 joined the dropped line: never started, while c2's later request on the same descriptor was granted at once (queue-order; fixed with arrive-as-wait-ends)",
  },
  {
    seed: 47296,
    finding:
      "the simulated client's own mistake (waiter-liveness), found by session 19's long run: c4's lock (acquireTimeoutMs 3000) was answered timeout at its deadline and the answer was lost; the client re-sent it with the whole 3 s wait again, the server granted it 1.7 s later and that answer was lost too, and the client's deadline had passed. The real client re-sends with what is left of its wait (none by then), and the simulated one now does the same (sim-caller.ts routedWait)",
  },
  {
    seed: 1266,
    finding:
      "found by session 20's long run: s2 was handing shard 1 over to s0 for balance (gate shut, final entry acknowledged, row moving) when c0's lock request reached it for ns-b, whose bound s2 had not loaded: it waited in the held-back line, which the entry did not carry, was told to re-send when the term ended, and c4's later request, which reached s0 first, was granted ahead of it (queue-order; fixed with hold-while-handing-over)",
  },
  {
    seed: 91820,
    finding:
      "found by session 20's long run: s1 handed shard 2 to s0 for balance; s0 was SIGTERMed (leaving the member list) and later recorded not in sync; s1's row move matched nothing and its answer was lost, so its outcome was unknown. s1 ended its term; the row had not moved, named s1 with no in-sync standby, and s1's next pass released it as an orphan: c4's lock was lost (durability; fixed with end-on-unknown-hand-over)",
  },
  {
    seed: 96068,
    finding:
      "found by session 20's long run: the same path with s0 isolated (cut from the database and the other members) instead of stopped: s1's move of shard 3 had its outcome unknown, s1 ended the term, and s0 took the released row empty 48 ms later (durability)",
  },
  {
    seed: 20,
    aimed: true,
    finding:
      "found by pnpm sim --aimed once a statement may be dropped on its way (session 22): s2's stop sent the row move of shard 3, dropped before it reached the database; its statement timed out, outcome unknown, and the stop released the shard: the next leader started empty and c4's and c1's locks were lost (durability; fixed with release-on-unknown-stop)",
  },
  { seed: 570, aimed: true, finding: "the same, s1's stop of shard 2: c0's lock lost" },
];

/**
 * The rules those fixes added, each with the first seed (of `pnpm sim --break <rule>
 * --until-violation`) on which removing it breaks a promise: the negative controls. A change to
 * the simulator changes every seed's run, so when the recorded seed no longer fails, the control
 * looks on through the next seeds (up to {@link SCAN}) before it gives up.
 */
const RULES: readonly { rule: TestBreak; firstSeed: number; alsoOff?: readonly TestBreak[]; swarm?: boolean; aimed?: boolean; blindTaker?: boolean; hostCrashes?: boolean }[] = [
  // First seeds of `pnpm sim:breaks` (each break from seed 1, `--until-violation` up to 1,000) on
  // the code of session 22 (2026-11-29 17:30-18:05 UTC: a stop leaves a row whose move's
  // outcome is unknown to its standby, which changed the runs with such a stop; five first seeds
  // moved, the rest are session 20's). The takeover's rules (gate, lease-wait, epoch-fence) have controls over CLI processes
  // too (packages/reliability, soak mode): in the test command the simulator is their control.
  // `alsoOff` names breaks removed beside the rule when only together they replay a recorded run
  // (none on this code).
  { rule: "gate", firstSeed: 23 },
  { rule: "lease-wait", firstSeed: 4 },
  { rule: "epoch-fence", firstSeed: 499 },
  { rule: "promote-any-replica", firstSeed: 36 },
  { rule: "balance-by-release", firstSeed: 1 },
  { rule: "stop-release-unsynced", firstSeed: 17 },
  { rule: "move-row-before-gate", firstSeed: 11 },
  { rule: "retry-before-ack", firstSeed: 19 },
  { rule: "drop-replica-on-unknown", firstSeed: 94 },
  { rule: "balance-abandon-release", firstSeed: 246 },
  { rule: "release-synced-orphan", firstSeed: 16 },
  { rule: "handed-over-without-former", firstSeed: 1 },
  { rule: "hand-over-during-lease-wait", firstSeed: 106 },
  { rule: "release-waiting-at-stop", firstSeed: 185 },
  { rule: "end-on-gate-close", firstSeed: 38 },
  { rule: "stop-unconfirmed-standby", firstSeed: 161 },
  { rule: "move-unknown-as-failed", firstSeed: 279 },
  { rule: "drop-carried-waiters", firstSeed: 261 },
  { rule: "no-standby-probe", firstSeed: 1 },
  { rule: "short-carried-lease", firstSeed: 32 },
  { rule: "answer-before-ack", firstSeed: 7 },
  { rule: "snapshot-after-position", firstSeed: 89 },
  // Found in seeds 1-1000 for the first time on session 20's code.
  { rule: "drop-carried-lease-wait", firstSeed: 244 },
  { rule: "reread-after-cadence", firstSeed: 653 },
  // Session 20's long run: the seed it was found on (its run replays event for event with the break).
  { rule: "hold-while-handing-over", firstSeed: 1266 },
  // Session 20's long run, fixed in session 21: the seed replays its run with the break.
  { rule: "end-on-unknown-hand-over", firstSeed: 91820 },
  // Never reached in seeds 1-1000 (its row names the taker, an in-sync standby, during every
  // hand-over those runs make), but in 91820's run the taker is recorded not in sync while the
  // move is in flight, and a pass in that window releases the row with the break (and in 96068's).
  { rule: "release-handing-over", firstSeed: 91820 },
  // Found only with `--aimed` (half the faults aimed at a hand-over's moment, sim-aimed.ts:
  // `pnpm sim:breaks --aimed`, session 22, 17:30-17:53 UTC, on the aimed kinds and strikes of
  // session 22: a stop inside a lease-wait, a statement dropped on its way).
  { rule: "end-on-unknown-hand-over", firstSeed: 105, aimed: true },
  { rule: "release-handing-over", firstSeed: 158, aimed: true },
  { rule: "adopt-clears-former", firstSeed: 91, aimed: true },
  { rule: "move-standby-unprotected", firstSeed: 202, aimed: true },
  // A stop inside a lease-wait with requests held back: no hand-over entry, so the taker keeps no
  // place for their re-sent requestIds (queue-order).
  { rule: "hand-over-stale-ack", firstSeed: 40, aimed: true },
  // Aimed seed 20's own run: the stop's row move dropped on its way.
  { rule: "release-on-unknown-stop", firstSeed: 20, aimed: true },
  // Session 23's longer plain scan (seeds 1,001-3,000): a balance move that recorded its in-sync
  // standby not in sync first, as its leader was cut off from the database and the members; the
  // row lapsed and was taken empty (durability, one failure).
  { rule: "balance-sync-unprotected", firstSeed: 2161 },
  // Found only with `--aimed --blind-taker` (session 23: the hand-over's NOTIFY lost and its
  // taker's reads of the rows blind for one to two leader leases): seed 20, a stop-handed row the
  // taker never adopts on its own expires and is taken empty (durability).
  { rule: "adopt-only-on-notify", firstSeed: 20, aimed: true, blindTaker: true },
  // Found with `--host-crashes` (session 23: a host crash also loses what its server sent that has
  // not arrived). Seed 863: a waiter begun before its term's standby was in sync is answered
  // unheld, and its leader is cut off from the database and the members before the standby has
  // the grant (one failure: durability); seed 1813 is the host crash itself, 1.1 ms after the answer.
  { rule: "unheld-before-attach", firstSeed: 863, hostCrashes: true },
  // Found only with both (`pnpm sim:breaks --aimed --swarm`, session 22, 17:53-18:00 UTC).
  { rule: "former-replaces-taker-stream", firstSeed: 702, swarm: true, aimed: true },
  { rule: "stop-renewing-handing-over", firstSeed: 502, swarm: true, aimed: true },
  // Session 24: no lock is lost with it (a balance taker must come in sync first, which a silent
  // member never does), so it is found by the servers' decisions instead, as the reliability
  // suite's cluster-repeated-crash counts `movesToDead`: the `balance-target` invariant
  // (sim-balance-target.ts), a balance move begun towards a member silent for longer than a
  // leader lease (and 100 ms) on the mover's clock. Seed 1: s1 crashed at 5,942 ms, s0 began a
  // move of shard 2 to it at 7,394 (1,452 ms later).
  { rule: "balance-to-silent-member", firstSeed: 1 },
  // Not found in seeds 1-1000 on this code, plain, with --swarm, --aimed or both (session 22's
  // scans), so not controlled here; each has a focused test that is its control
  // (docs/reliability.md "Test breaks"): the code not reached: stop-releases-adopted; timing:
  // stop-skips-handed-over, immutables-before-decide, stop-ignores-acked-hand-over (neither of the
  // two stop breaks with --aimed --blind-taker either), arrive-as-wait-ends,
  // hand-over-unfenced-round (none of them in aimed seeds 1,001-3,000 either, session 23).
];
const SCAN = 60;

describe("seeds the simulator once failed on", () => {
  for (const { seed, finding, aimed = false } of FIXED) {
    it(`seed ${seed}${aimed ? " (--aimed)" : ""} keeps every promise (${finding})`, async () => {
      const result = await runSeed(seed, new Set(), 0, { aimed });
      expect(result.violations).toEqual([]);
    });
  }
});

describe("safety rules, each removed by its break (negative controls)", () => {
  for (const { rule, firstSeed, alsoOff = [], swarm = false, aimed = false, blindTaker = false, hostCrashes = false } of RULES) {
    const also = (alsoOff.length > 0 ? ` (with ${alsoOff.join(", ")})` : "") + (swarm ? " (--swarm)" : "") + (aimed ? " (--aimed)" : "") + (blindTaker ? " (--blind-taker)" : "") + (hostCrashes ? " (--host-crashes)" : "");
    const run = (seed: number, breaks: readonly TestBreak[]) => runSeed(seed, new Set(breaks), 0, { swarm, aimed, blindTaker, hostCrashes });
    it(`with ${rule}${also} a run breaks a promise (recorded first at seed ${firstSeed})`, async () => {
      let found: number | null = null;
      for (let seed = firstSeed; seed < firstSeed + SCAN && found === null; seed++) {
        if ((await run(seed, [rule, ...alsoOff])).violations.length > 0) found = seed;
      }
      expect(found, `no violation with ${rule}${also} in seeds ${firstSeed}..${firstSeed + SCAN - 1}`).not.toBeNull();
      // The same seed keeps every promise with the rule in place: the break is what broke it.
      expect((await run(found!, [])).violations).toEqual([]);
      // And with only the other breaks: this rule alone saves the run.
      if (alsoOff.length > 0) expect((await run(found!, alsoOff)).violations).toEqual([]);
    }, 120_000);
  }
});
