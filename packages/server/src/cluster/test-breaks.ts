import type { Logger } from "pino";

/**
 * The safety rules a negative control can switch off (never in production), and what switching
 * each off does. Every name is listed, with the test that catches it, in docs/reliability.md
 * "Test breaks".
 */
export const TEST_BREAKS = {
  gate: "the serving gate never closes by time",
  "epoch-fence": "bound extensions are not fenced by the shard's epoch",
  "lease-wait": "a new leader grants at once, without waiting out the old leader's leases",
  "answer-before-ack": "a late standby's waiting grants are answered before in_sync = false is recorded",
  "promote-any-replica": "a member promotes whatever replica it holds of a shard it takes, whatever the row says of its standby, incarnation, epoch and leaderId",
  "balance-by-release": "a balance move releases the shard instead of handing it over with its table",
  "stop-release-unsynced": "at stop a shard without an in-sync standby is released at once instead of getting one first",
  "drop-carried-waiters": "a promoted or handed-over table keeps no waiter's place for its re-sent requestId: neither the engine's carried waiters nor the requests held back during a lease-wait",
  "move-row-before-gate": "a balance hand-over moves the row to the taker before it ends the old term, which serves on until its gate closes by time",
  "release-handing-over": "a pass counts the row of a shard being handed over as an orphan and releases it, table and all",
  "retry-before-ack": "an answer waits only for the entries its own operation appended: a retry with the same requestId, a lock-watch event or an inspection reveals a grant the standby has not acknowledged",
  "unheld-before-attach":
    "a request that began before the term's standby was attached and in sync (the term's first moments, or after its standby was recorded not in sync) is answered unheld whenever it is granted: whether to hold is decided as it begins, not when its answer is ready",
  "snapshot-after-position": "a standby's log position is taken before its snapshot, so a lapse the export reaps is both in the image and sent after it",
  "short-carried-lease": "a promoted table restarts its carried leases at the taker's own --lease-ms only, however long an earlier leader's validForMs",
  "drop-replica-on-unknown": "a takeover or adoption whose statement failed (outcome unknown) drops the replica, so a row it did commit is released as an orphan",
  "stop-renewing-handing-over": "a term being handed over is no longer renewed, so its row may expire before it moved",
  "hand-over-stale-ack": "a hand-over completes on the standby's acknowledgement of the log as it stood, an earlier cumulative one, instead of a fresh one of the hand-over entry",
  "balance-to-silent-member": "a member that does not answer (no probe answered within a leader lease, or its own terms lapsing) still counts in the shares and is a balance target while its heartbeat row is fresh",
  "balance-abandon-release": "a balance hand-over whose taker does not acknowledge releases the shard, table and all, instead of reopening its gate",
  "release-synced-orphan": "a pass releases a row of this process's that it no longer leads even when the row names an in-sync standby, table and all, instead of leaving it to the standby",
  "handed-over-without-former": "a balance hand-over clears the row's standby instead of naming the former leader, which keeps the table, its in-sync standby until the taker adopts it: a taker that never adopts leaves the row to expire and be taken empty",
  "hand-over-during-lease-wait": "a term still inside its lease-wait is handed over for balance like any other, and its taker serves at once (the rest of the wait is not carried), before the earlier leader's leases ran out",
  "release-waiting-at-stop": "at stop a term still inside its lease-wait is released instead of handed over, losing the transactions' immutable-timestamp locks and leased timestamps it served during the wait",
  "drop-carried-lease-wait": "a table promoted or handed over while its leader was still inside its lease-wait serves at once, without the rest of the wait its snapshot carried",
  "end-on-gate-close": "a term whose serving gate closed by time (no renewal confirmed the row in time) ends at once and drops its table, instead of keeping it until a renewal tells",
  "stop-unconfirmed-standby": "at stop a shard whose row names an in-sync standby is handed to it without first confirming that it still answers, so a standby stopped or killed moments before (not yet noticed) gets a hand-over it never acknowledges and the shard is released, table and all",
  "stop-skips-handed-over": "at stop a row handed over to this member that it has not adopted yet (its NOTIFY lost, no pass since) is left to expire once it exits, and is taken empty, instead of adopted and handed on with its table",
  "stop-releases-adopted": "a hand-over adopted with its table once this server began to stop is released, table and all, instead of left to expire for its in-sync standby (the former leader) to take over",
  "adopt-clears-former": "a taker's adoption of a balance hand-over clears the row's standby (the former leader, which holds the table as handed over) instead of keeping it named in sync and resuming its replication to it, so a taker that fails right after adopting leaves the shard to be taken empty, its locks lost",
  "move-standby-unprotected": "a taker moves the standby its adoption kept (the former leader) to the member standbys spread best to by recording it not in sync first and then naming and syncing the new one, instead of syncing the new one while the kept one stays named in sync, so a taker that fails during the new one's join leaves the shard to be taken empty",
  "balance-sync-unprotected": "a balance move whose shard's in-sync standby is another member than the taker records it not in sync first and then names and syncs the taker, instead of moving the standby to the taker while the current one stays named in sync, so a crash of the leader during the taker's join (or as the not-in-sync record goes out) leaves the shard to be taken empty",
  "move-unknown-as-failed": "a standby move whose row update's outcome is unknown (statement timeout) is given up as if it had not committed: the new standby's stream is dropped and grants wait for the former alone, though the row may name the new one in sync",
  "immutables-before-decide": "a pass decides which shards to take only once its statement recording the immutable timestamps answered, so a lost answer (a statement timeout) holds an in-sync standby's takeover of a dead leader's shard for a third of a leader lease, and the other members may take it empty meanwhile",
  "adopt-only-on-notify":
    "a taker that acknowledged its leader's final hand-over entry adopts the moved row only on its NOTIFY or a read of the rows, never on its own: with the NOTIFY and the answers of its next reads lost, a stop-handed row (its standby cleared) expires and is taken empty by another member, its locks lost",
  "reread-after-cadence": "a pass whose read of the lease rows failed (a lost answer: a statement timeout) is followed by the next a whole third of a leader lease after the failure, not after the read was sent, so two lost answers use up an in-sync standby's takeover of a dead leader's shard and the other members take it empty",
  "former-replaces-taker-stream":
    "a balance hand-over's former leader that hears its move statement's outcome late (unknown, or answered after the taker adopted) replaces the taker's own stream of the new epoch, already in its replica store, with the table as handed over under another stream identity, so the taker's next entries are refused, its standby is found not in sync at its stop and the shard is released without its locks",
  "stop-ignores-acked-hand-over":
    "a stopping member reads the rows once for hand-overs to adopt before it stops: a row moved to it just after that read, for a hand-over entry it acknowledged, is left to expire once it exits, and is taken empty when its former leader (its standby) stops meanwhile",
  "arrive-as-wait-ends":
    "a lock or wait-for-locks request that arrives once a term's lease-wait is due but before its timer fired joins the held-back line its own arrival starts and detaches: it is never started (only its client's timeout ends it), and later requests on its descriptor are granted ahead of it",
  "hold-while-handing-over":
    "a lock or wait-for-locks request that reaches a term while a balance hand-over has its gate shut, for a namespace whose requests are held back (its bound loading, or the lease-wait), takes a place in the held-back line the hand-over's entry does not carry: told to re-send when the term ends, it finds its place gone at the taker, and a later request that reached the taker first is granted ahead of it; and a held-back line whose bound loads during the pause starts into the shut gate, its requests refused, so an abandoned hand-over leaves their order to whichever re-send comes first",
  "end-on-unknown-hand-over":
    "a balance hand-over whose row move's outcome is unknown (a statement timeout) ends the term at once instead of fencing the move with a later write of the term's sync rounds and serving on: when the row did not move and the taker is no longer its in-sync standby (stopped or cut off meanwhile), the member's next pass releases it as an orphan, table and all",
  "hand-over-unfenced-round":
    "a balance hand-over's row move is sent without its sync round, so the write that is to fence a move whose outcome is unknown does not: the move may still commit after the term serves again, and both the taker and the former leader serve the shard",
  "release-on-unknown-stop":
    "a stop whose row move's statement failed (a timeout, its outcome unknown: the statement dropped on its way, or its answer lost; or any other error) releases the shard instead of leaving the row as it is: when the move did not commit, the next leader starts empty and every lock the in-sync standby holds is lost",
  "no-standby-probe": "a leader never asks an idle shard's standby for an acknowledgement, so a dead standby of a shard without traffic stays named in sync",
} as const;

/** The name of a rule {@link TEST_BREAKS} lists. */
export type TestBreak = keyof typeof TEST_BREAKS;

const KNOWN = Object.keys(TEST_BREAKS) as TestBreak[];

/** The command-line flag a server must be started with before it reads any test knob. */
export const TEST_KNOBS_FLAG = "--unsafe-test-knobs";

/**
 * The value of test knob `name`, or `undefined`: read only when the server was started with
 * {@link TEST_KNOBS_FLAG} (`enabled`) and logs at `debug`. Two explicit opt-ins, so a stray
 * variable on a production server changes nothing; when it is set but not read, the server says so
 * at `warn`, because someone meant it to act. `atAnyLevel` (default false) drops the second opt-in,
 * for a benchmark knob whose cost a debug access log would distort.
 */
function knob(name: string, logger: Logger, enabled: boolean, env: NodeJS.ProcessEnv, atAnyLevel = false): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === "") return undefined;
  if (enabled && (atAnyLevel || logger.isLevelEnabled("debug"))) return raw;
  const needs = atAnyLevel ? `it acts only with ${TEST_KNOBS_FLAG}` : `test knobs act only with ${TEST_KNOBS_FLAG} and --log-level debug`;
  logger.warn({ variable: name }, `${name} is set but ignored: ${needs}`);
  return undefined;
}

/** The range of an {@link integerKnob}: at least `min`, at most `max` (a `noun`, such as "a port number"), and whether it is read at any log level. */
interface IntegerRange {
  readonly min: number;
  readonly max?: number | undefined;
  readonly noun?: string | undefined;
  readonly atAnyLevel?: boolean | undefined;
}

/**
 * An integer knob in `range`, read like {@link knob}; said at `warn` (`<what> <name>`, the value
 * under `field`) when it acts. Throws a RangeError naming the variable on a bad value.
 */
function integerKnob(name: string, range: IntegerRange, field: string, what: string, logger: Logger, enabled: boolean, env: NodeJS.ProcessEnv): number | undefined {
  const raw = knob(name, logger, enabled, env, range.atAnyLevel);
  if (raw === undefined) return undefined;
  const { min, max = Number.MAX_SAFE_INTEGER, noun = "an integer" } = range;
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(value) || value < min || value > max) {
    const bounds = range.max === undefined ? `of at least ${min}` : `from ${min} to ${max}`;
    throw new RangeError(`${name} must be ${noun} ${bounds} (got ${JSON.stringify(raw)})`);
  }
  logger.warn({ [field]: value }, `TEST ONLY: ${what} ${name}`);
  return value;
}

/**
 * TEST ONLY. The rules named in `LEASEHOLD_TEST_BREAK` (comma-separated names of {@link TEST_BREAKS})
 * are switched off, so the negative controls (the cluster fault suite, packages/reliability, and
 * the cluster tests) can
 * show that their checks fire without them. Read only when `enabled` ({@link TEST_KNOBS_FLAG}) and at
 * `--log-level debug`; when it acts, it says so at `warn`. Throws a RangeError on an unknown rule.
 */
export function testBreaks(logger: Logger, enabled: boolean, env: NodeJS.ProcessEnv = process.env): ReadonlySet<TestBreak> {
  const raw = knob("LEASEHOLD_TEST_BREAK", logger, enabled, env);
  if (raw === undefined) return new Set();
  const breaks = new Set<TestBreak>();
  for (const name of raw.split(",").map((s) => s.trim())) {
    if (!(KNOWN as readonly string[]).includes(name)) throw new RangeError(`LEASEHOLD_TEST_BREAK: unknown rule ${JSON.stringify(name)} (known: ${KNOWN.join(", ")})`);
    breaks.add(name as TestBreak);
  }
  logger.warn({ breaks: [...breaks] }, "TEST ONLY: cluster safety rules switched off by LEASEHOLD_TEST_BREAK");
  return breaks;
}

/**
 * TEST ONLY. `LEASEHOLD_TEST_RESERVE_BLOCK=<n>` (an integer ≥ 2) makes the timestamp bound's
 * reservation block `n` instead of the default, so a negative control of the reliability suite
 * (the epoch fence, section 5) can make almost every timestamp need its own bound extension. Read
 * only like {@link testBreaks}, and said at `warn` when it acts. Answers `undefined` when unset or
 * not read. Throws a RangeError on a bad value.
 */
export function testReserveBlock(logger: Logger, enabled: boolean, env: NodeJS.ProcessEnv = process.env): number | undefined {
  return integerKnob("LEASEHOLD_TEST_RESERVE_BLOCK", { min: 2 }, "reserveBlock", "timestamp reservation block set by", logger, enabled, env);
}

/**
 * TEST ONLY. `LEASEHOLD_TEST_REPLICATION_WINDOW=<n>` (an integer ≥ 1) keeps at most `n` replication
 * messages in flight to a standby instead of the default (ReplicationSender's `maxInFlight`), so the
 * standby controls of the reliability suite can stop a standby with one entry in flight and the
 * next one never sent (with many in flight, a stopped standby's socket holds every entry and it
 * applies them all once resumed: nothing answered is then missing from it, and the control proves
 * nothing). Read only like {@link testBreaks}, and said at `warn` when it acts. Answers `undefined`
 * when unset or not read. Throws a RangeError on a bad value.
 */
export function testReplicationWindow(logger: Logger, enabled: boolean, env: NodeJS.ProcessEnv = process.env): number | undefined {
  return integerKnob("LEASEHOLD_TEST_REPLICATION_WINDOW", { min: 1 }, "replicationWindow", "replication messages in flight limited by", logger, enabled, env);
}

/**
 * TEST ONLY. `LEASEHOLD_TEST_HAND_OVER_PAUSE_MS=<n>` (an integer ≥ 1) makes every hand-over wait
 * `n` ms between the standby's final acknowledgement and the row move (ClusterRuntimeOptions'
 * `handOverPauseMs`), so a test can run a pass of the leader inside that window and show that it
 * leaves the shard to the hand-over (with `release-handing-over` it releases it). Read only like
 * {@link testBreaks}, and said at `warn` when it acts. Answers `undefined` when unset or not read.
 * Throws a RangeError on a bad value.
 */
export function testHandOverPauseMs(logger: Logger, enabled: boolean, env: NodeJS.ProcessEnv = process.env): number | undefined {
  return integerKnob("LEASEHOLD_TEST_HAND_OVER_PAUSE_MS", { min: 1 }, "handOverPauseMs", "hand-overs paused before the row move by", logger, enabled, env);
}

/**
 * BENCHMARK ONLY, and unsafe. `LEASEHOLD_TEST_ECHO_STANDBY_PORT=<port>` replaces every replication
 * connection of a leader with one to an echo server on that local port (echo-replication-transport.ts):
 * a "standby" that acknowledges each message after one byte there and back and holds nothing, so
 * `pnpm bench cluster-floor` can measure the floor of what any standby in another process costs on
 * the machine at hand. A takeover then loses every lock. Unlike the other knobs it is read with
 * {@link TEST_KNOBS_FLAG} at any log level: `--log-level debug` writes an access-log line per
 * request, which would change the very cost it is there to measure (the flag is still needed, so a
 * stray variable on a production server changes nothing). Said at `warn` when it acts. Answers
 * `undefined` when unset or not read. Throws a RangeError on a bad value.
 */
export function testEchoStandbyPort(logger: Logger, enabled: boolean, env: NodeJS.ProcessEnv = process.env): number | undefined {
  const range = { min: 1, max: 65_535, noun: "a port number", atAnyLevel: true };
  return integerKnob("LEASEHOLD_TEST_ECHO_STANDBY_PORT", range, "echoStandbyPort", "every standby replaced (unsafe: it holds nothing) by the echo server named by", logger, enabled, env);
}

/** What a floor standby ({@link testStandbyFloor}) still does with each entries message. */
export type StandbyFloor = "auth" | "decode";

/**
 * BENCHMARK ONLY, and unsafe. `LEASEHOLD_TEST_STANDBY_FLOOR=auth|decode` makes this member's
 * standby side answer each entries message of the replication stream without applying it, so
 * `pnpm bench cluster` can measure the floors under issue 32's standby targets in the same run as
 * the real standby (standby-floor.ts): `auth` checks each frame's MAC and signs each answer, and
 * reads the message's last sequence number from its bytes without decoding it; `decode` also
 * decodes and checks the message's shape. Snapshots are still restored; a takeover then serves a
 * table without the entries since, and the replica store never sees an entry, the hand-over
 * entry included (`onHandOverEntry` is not called), so a hand-over to such a standby does not go
 * as in a real cluster: the floors are for measuring a cluster in steady state, nothing else. Read like {@link testEchoStandbyPort} (with
 * {@link TEST_KNOBS_FLAG}, at any log level), said at `warn` when it acts. Answers `undefined` when
 * unset or not read. Throws a RangeError on another value.
 */
export function testStandbyFloor(logger: Logger, enabled: boolean, env: NodeJS.ProcessEnv = process.env): StandbyFloor | undefined {
  const raw = knob("LEASEHOLD_TEST_STANDBY_FLOOR", logger, enabled, env, true);
  if (raw === undefined) return undefined;
  if (raw !== "auth" && raw !== "decode") throw new RangeError(`LEASEHOLD_TEST_STANDBY_FLOOR must be auth or decode (got ${JSON.stringify(raw)})`);
  logger.warn({ standbyFloor: raw }, "TEST ONLY: the standby answers entries without applying them (unsafe: it holds none), LEASEHOLD_TEST_STANDBY_FLOOR");
  return raw;
}
