import type { FaultKind } from "./sim-fault-kinds.js";
import { serverOf, statementTimeoutMs, type StatementFate } from "./sim-network.js";
import type { SimRandom } from "./sim-random.js";
import type { SimWorld } from "./sim-world.js";

/**
 * Faults aimed at a moment of a hand-over (`pnpm sim --aimed`). Each first brings one about, the
 * way deploys do: a member gets SIGTERM (its shards are handed to their standbys) and is restarted
 * once it exited, and the others then balance shards back to it. Then it waits for the statement
 * of its kind (the stop's row move, a balance row move to the restarted member, that member's
 * adoption of it, or its move of the kept standby) and strikes as it is sent, at the member the
 * moment matters to. Drawn at random, such a moment comes up once in thousands of seeds: the long
 * runs found the interleavings of seeds 1266, 91820 and 96068 there.
 */
export type AimedKind = "aim-stop-hand-over" | "aim-hand-over" | "aim-adopt" | "aim-move-standby" | "aim-taker-named" | "aim-stop-in-lease-wait";

/** The aimed faults a plan draws from (a kind listed twice is drawn twice as often). */
export const AIMED: readonly AimedKind[] = ["aim-stop-hand-over", "aim-hand-over", "aim-hand-over", "aim-adopt", "aim-move-standby", "aim-taker-named", "aim-taker-named", "aim-stop-in-lease-wait"];

/** True for an aimed fault's kind. */
export function isAimed(kind: string): kind is AimedKind {
  return (AIMED as readonly string[]).includes(kind);
}

/** The statement each aimed fault waits for (the names memory-coordinator.ts sends them under). */
const STATEMENT: Readonly<Record<AimedKind, readonly string[]>> = {
  "aim-stop-hand-over": ["hand-over"],
  "aim-hand-over": ["hand-over"],
  "aim-adopt": ["adopt-hand-over"],
  "aim-move-standby": ["move-standby"],
  // A balance move names its taker the shard's in-sync standby first: moved to it, or synced.
  "aim-taker-named": ["move-standby", "set-in-sync"],
  // Not a statement's moment: see stopInLeaseWait.
  "aim-stop-in-lease-wait": [],
};

/**
 * What strikes once the statement is sent, as `+`-joined parts: `sender-…` or `other-…` (a
 * `sigterm`, `crash`, `pause` or `isolate` of the member that sent it, or of the member at the
 * other end: a row move's taker, an adoption's or a standby move's standby, the former leader the
 * row names); `lost`: the statement's answer is lost; `slow`: it reaches the database up to a few
 * hundred ms later, still within its sender's statement timeout (`lost` and `slow` are ordinary
 * trouble, not failures); `nonotify`: every NOTIFY it sends is lost (ordinary trouble too);
 * `dropped`: it never reaches the database, and its sender sees it time out (a connection broken
 * on the way: ordinary trouble); `late`: it lands after its sender gave up (the database slow for
 * that statement: one failure); `blind` (only with `--blind-taker`, see {@link BLIND_STRIKES}): the
 * answers of the other end's (the taker's) reads of the lease rows ({@link BLIND_STATEMENTS}) are lost
 * for one to two leader leases from the moment the statement is sent (ordinary trouble too), so with
 * `nonotify` the taker learns of the moved row neither by NOTIFY nor by its reads for that long.
 */
const STRIKES: Readonly<Record<AimedKind, readonly string[]>> = {
  // The stopping member is down already (a failure): only what is not one more, or late.
  "aim-stop-hand-over": ["lost", "slow+lost", "slow", "nonotify", "lost+nonotify", "dropped", "late"],
  "aim-hand-over": [
    "other-sigterm",
    "other-sigterm+lost",
    "other-sigterm+slow",
    "other-sigterm+slow+lost",
    "other-crash+slow",
    "other-crash+slow+lost",
    "other-isolate",
    "other-isolate+slow+lost",
    "other-sigterm+nonotify",
    "other-sigterm+slow+nonotify",
    "nonotify",
    "sender-crash",
    "sender-crash+slow",
    "lost",
    "slow+lost",
    "dropped",
    "other-sigterm+dropped",
    "late",
  ],
  "aim-adopt": ["sender-crash", "sender-crash+slow", "sender-pause", "sender-sigterm", "sender-sigterm+slow+lost", "lost", "dropped", "other-crash", "other-sigterm+slow", "late"],
  "aim-move-standby": ["sender-crash", "sender-crash+slow", "sender-sigterm", "lost", "slow+lost", "dropped", "late", "other-crash", "other-crash+slow+lost"],
  // See takerNamed: always the taker's stop, and the answer of the leader's next row move lost.
  "aim-taker-named": ["other-sigterm+lost"],
  // See stopInLeaseWait: always a stop.
  "aim-stop-in-lease-wait": ["sigterm"],
};

/**
 * The strikes `--blind-taker` adds to {@link STRIKES} (`RunOptions.blindTaker`): drawn by the same
 * pick, from the longer list; without the flag the lists, and so every draw, are as before.
 */
const BLIND_STRIKES: Readonly<Partial<Record<AimedKind, readonly string[]>>> = {
  "aim-stop-hand-over": ["nonotify+blind", "lost+nonotify+blind"],
  "aim-hand-over": ["nonotify+blind"],
};

/**
 * The statements a taker learns of a row moved to it by, other than its NOTIFY: the reads of the
 * lease rows (its passes, and a stop's look for hand-overs to adopt first, adopt-before-stop.ts).
 * Its attempts after acknowledging the hand-over entry (adopt-after-ack.ts) are fenced writes
 * (`adopt-hand-over`), not reads: a `blind` strike leaves them be.
 */
export const BLIND_STATEMENTS: readonly string[] = ["read-leases"];

/** The strikes an aimed fault of `kind` draws from (see {@link BLIND_STRIKES}). */
function strikesOf(kind: AimedKind, blindTaker: boolean): readonly string[] {
  const more = blindTaker ? BLIND_STRIKES[kind] : undefined;
  return more === undefined ? STRIKES[kind] : [...STRIKES[kind], ...more];
}

/** A strike's parts (see {@link STRIKES}). */
interface Strike {
  readonly at: "sender" | "other" | null;
  readonly action: "sigterm" | "crash" | "pause" | "isolate" | null;
  readonly lost: boolean;
  readonly slow: boolean;
  readonly late: boolean;
  readonly nonotify: boolean;
  readonly dropped: boolean;
  readonly blind: boolean;
}

function parseStrike(text: string): Strike {
  const parts = text.split("+");
  const [at, action] = parts[0]!.includes("-") ? (parts[0]!.split("-") as [Strike["at"], Strike["action"]]) : [null, null];
  return { at, action, lost: parts.includes("lost"), slow: parts.includes("slow"), late: parts.includes("late"), nonotify: parts.includes("nonotify"), dropped: parts.includes("dropped"), blind: parts.includes("blind") };
}

/** What an aimed fault (and sim-host-crash.ts's strike) needs of its fault plan (sim-faults.ts). */
export interface AimHost {
  readonly world: SimWorld;
  readonly plan: SimRandom;
  /** `--blind-taker` (`RunOptions.blindTaker`): the hand-over kinds may also draw a `blind` strike (see {@link BLIND_STRIKES}). */
  readonly blindTaker: boolean;
  sleep(ms: number, label: string): Promise<void>;
  /** Record a failure of `kind` from now (its span in the history): answers its end. */
  failure(kind: FaultKind, what: string): () => void;
  /** Cut `victim` from the database and every other member for two leader leases and `lasts`, resolving once healed (it records its failure). */
  isolate(victim: string, lasts: number): Promise<void>;
  /** Add a line to the run's fault log. */
  log(line: string): void;
}

/** Ends a {@link trap} with the member that sprang it: at once, or as an event labelled `event`. */
type Spring = (sender: string, event?: string) => void;

/**
 * Listen (the network has one ear: one trap at a time) for statements named in `names`: `hear` is
 * asked, as each is sent, with its sender's server id, the statement, its sender's process name
 * and a {@link Spring} that ends the trap; it answers the statement's fate. Resolves with the member that
 * sprang it, or `null` once `withinMs` passed without.
 */
function trap(world: SimWorld, names: readonly string[], withinMs: number, hear: (sender: string, statement: string, processName: string, spring: Spring) => StatementFate | undefined): Promise<string | null> {
  return new Promise((resolve) => {
    let done = false;
    const end = (): boolean => {
      if (done) return false;
      done = true;
      world.network.onStatement = null;
      return true;
    };
    const spring: Spring = (sender, event) => {
      if (!end()) return;
      if (event === undefined) resolve(sender);
      else world.scheduler.after(0, "world", event, () => resolve(sender));
    };
    world.network.onStatement = (process, statement) => (done || !names.includes(statement) ? undefined : hear(serverOf(process), statement, process.name, spring));
    world.scheduler.after(withinMs, "world", `aimed: no ${names.join(" or ")} yet`, () => {
      if (end()) resolve(null);
    });
  });
}

/**
 * Wait up to `withinMs` for the next statement named in `names` whose sender `matches`, giving it
 * `fate` and calling `onSent` as it is sent (bookkeeping only: the run's events are untouched);
 * answers the sender's server id, or `null` when none came.
 */
function nextStatement(world: SimWorld, names: readonly string[], matches: (sender: string) => boolean, fate: StatementFate | undefined, onSent: (sender: string) => void, withinMs: number): Promise<string | null> {
  return trap(world, names, withinMs, (sender, statement, processName, spring) => {
    if (!matches(sender)) return undefined;
    onSent(sender);
    spring(sender, `aimed at ${statement} of ${processName}`);
    return fate;
  });
}

/** The member at the other end of `kind`'s statement sent by `sender`, now (see {@link Strike}). */
function otherEnd(world: SimWorld, kind: AimedKind, sender: string): string | null {
  if (kind === "aim-hand-over" || kind === "aim-stop-hand-over") return takerOf(world, sender);
  return world.rows.standbyOf(sender);
}

/**
 * Bring the moment about: SIGTERM of `member` (a graceful stop: one failure, over at its restart),
 * restarted `downMs` after it exited. For `aim-stop-hand-over` the trap is set first (the stop's own
 * row moves); for the others, once it restarted (the balance towards it). Answers the trap.
 */
async function provoke(host: AimHost, kind: AimedKind, member: string, downMs: number, trap: () => Promise<string | null>): Promise<Promise<string | null>> {
  const { world } = host;
  const heal = host.failure("sigterm", `aimed (${kind}): sigterm of ${member}, restarted ${downMs} ms after it stopped`);
  const early = kind === "aim-stop-hand-over" ? trap() : null;
  await world.terminate(member);
  await host.sleep(downMs, `restart ${member}`);
  world.start(member);
  heal();
  return early ?? trap();
}

/** Run one aimed fault of `kind`; resolves once it healed (or once its statement did not come). */
export async function aim(host: AimHost, kind: AimedKind, lasts: number): Promise<void> {
  const { world, plan } = host;
  const member = plan.pick(world.ids());
  const downMs = plan.int(50, 1_200);
  // Drawn before the statement comes: its fate is settled as it is sent.
  const text = plan.pick(strikesOf(kind, host.blindTaker));
  const strike = parseStrike(text);
  const delay = plan.pick([0, 0, 1, 2, 5, 10, 20, 30]);
  const timeoutMs = statementTimeoutMs(world.settings.leaderLeaseMs);
  const extraDelayMs = strike.late ? timeoutMs + plan.int(20, 600) : strike.slow ? plan.int(20, timeoutMs - 40) : 0;
  // Drawn only for a `blind` strike (never without --blind-taker): one to two leader leases.
  const leaseMs = world.settings.leaderLeaseMs;
  const blindMs = strike.blind ? plan.int(leaseMs, 2 * leaseMs) : 0;
  const fate: StatementFate = { answerLost: strike.lost, extraDelayMs, notifyLost: strike.nonotify, dropped: strike.dropped };
  if (kind === "aim-taker-named") return takerNamed(host, member, downMs, delay, lasts, strike.lost);
  if (kind === "aim-stop-in-lease-wait") return stopInLeaseWait(host, downMs, lasts);
  const names = STATEMENT[kind];
  const name = names[0]!;
  // The stop's moves are the member's own; the balance moves go to it; it adopts and moves standbys.
  const matches = (sender: string): boolean => (kind === "aim-stop-hand-over" ? sender === member : kind === "aim-hand-over" ? sender !== member && takerOf(world, sender) === member : sender === member);
  // A late statement is a failure from the moment it is sent (the database slow for it), whatever
  // else is going on then (the stop it was aimed at: two failures at once).
  let lateHeal: (() => void) | null = null;
  let other: string | null = null;
  let blinded: string | null = null;
  const onSent = (sender: string): void => {
    other = otherEnd(world, kind, sender);
    const taker = strike.blind && other !== null ? world.processOf(other) : null;
    if (taker !== null) world.network.blindAnswers((blinded = taker.name), BLIND_STATEMENTS, world.scheduler.now + blindMs);
    if (strike.late) lateHeal = host.failure("slow-database", `aimed (${kind}): ${sender}'s ${name} reaches the database ${extraDelayMs} ms late (after its statement timeout)`);
  };
  const sender = await (await provoke(host, kind, member, downMs, () => nextStatement(world, names, matches, fate, onSent, 8_000)));
  if (sender === null) {
    host.log(`aimed (${kind}): no ${name} statement within 8 s`);
    return;
  }
  // Set by onSent (a closure: the compiler sees only its initial null).
  const blindedName = blinded as string | null;
  const trouble = [strike.slow ? `${extraDelayMs} ms slow` : "", strike.lost ? "its answer lost" : "", strike.nonotify ? "its NOTIFY lost" : "", strike.dropped ? "dropped on its way" : "", strike.blind ? (blindedName === null ? "no taker running to blind" : `${blindedName}'s reads of the rows blind for ${blindMs} ms`) : ""].filter((x) => x !== "").join(", ");
  const how = trouble === "" ? "" : ` (${trouble})`;
  if (strike.late) {
    await host.sleep(extraDelayMs + 100, "late statement landed");
    return (lateHeal as (() => void) | null)?.();
  }
  const target = strike.at === "sender" ? sender : strike.at === "other" ? (other as string | null) : null;
  if (strike.action === null || target === null) {
    host.log(`aimed (${kind}): ${sender} sent ${name}${how}${strike.action === null ? "" : `, no member at the other end`}`);
    return;
  }
  await host.sleep(delay, `aimed strike at ${target}`);
  if (strike.action === "isolate") {
    host.log(`aimed (${kind}): ${sender} sent ${name}${how}; ${target} isolated ${delay} ms later`);
    return host.isolate(target, lasts);
  }
  const action = strike.action;
  const heal = host.failure(action, `aimed (${kind}): ${action} of ${target} ${delay} ms after ${sender} sent ${name}${how}, back after ${lasts} ms`);
  if (action === "sigterm") await world.terminate(target);
  else if (action === "crash") world.crash(target);
  else world.pause(target);
  await host.sleep(lasts, `aimed: back ${target}`);
  if (action === "pause") world.resume(target);
  else world.start(target);
  heal();
}

/**
 * Wait up to `withinMs` for a statement named in `names`, sent by another member than `member`,
 * that leaves that member's row naming `member` its in-sync standby once applied; answers the
 * sender, or `null`.
 */
function nextInSyncNaming(world: SimWorld, names: readonly string[], member: string, withinMs: number): Promise<string | null> {
  return trap(world, names, withinMs, (sender, _statement, _processName, spring) => {
    if (sender === member) return undefined;
    const applied = (): void => {
      if (world.store.readLeases().some((r) => r.holder === sender && r.standbyId === member && r.inSync)) spring(sender);
    };
    return { applied };
  });
}

/**
 * The member `leader` hands a shard to now: the in-sync standby named by the row of its term paused
 * for a balance hand-over, else of any row it leads (`LeaseRows.standbyOf`); `null` when none.
 */
function takerOf(world: SimWorld, leader: string): string | null {
  const rows = world.store.readLeases();
  for (const term of world.memberOf(leader)?.runtime.terms ?? []) {
    const standby = term !== null && term.pausedForHandOver ? rows[term.shard]?.standbyId : null;
    if (standby !== null && standby !== undefined) return standby;
  }
  return world.rows.standbyOf(leader);
}

/**
 * `aim-taker-named`: the interleaving of seeds 91820 and 96068, aimed at. Once `member` restarted,
 * another member's row comes to name it its in-sync standby (a standby move to it, or its record
 * in sync), as a balance move to it begins; `member` gets SIGTERM `delay` ms after that landed (one
 * failure: a graceful stop), while the leader waits for its acknowledgement of the hand-over entry
 * and then moves the row to it; that row move's answer is lost (`answerLost`: ordinary trouble), so
 * its outcome is unknown to the leader, and the stopping taker may have left the member list
 * before it landed.
 */
async function takerNamed(host: AimHost, member: string, downMs: number, delay: number, lasts: number, answerLost: boolean): Promise<void> {
  const { world } = host;
  const kind: AimedKind = "aim-taker-named";
  const named = await (await provoke(host, kind, member, downMs, () => nextInSyncNaming(world, STATEMENT[kind], member, 8_000)));
  if (named === null) {
    host.log(`aimed (${kind}): no standby named within 8 s`);
    return;
  }
  const moved = nextStatement(world, ["hand-over"], (sender) => sender === named, { answerLost }, () => undefined, 3_000);
  await host.sleep(delay, `aimed strike at ${member}`);
  const heal = host.failure("sigterm", `aimed (${kind}): sigterm of ${member} ${delay} ms after ${named} named a standby, restarted ${lasts} ms after it stopped`);
  const stopped = world.terminate(member);
  const sent = await moved;
  host.log(`aimed (${kind}): ${sent === null ? `no row move by ${named} within 3 s` : `${named}'s next row move sent, its answer lost`}`);
  await stopped;
  await host.sleep(lasts, `restart ${member}`);
  world.start(member);
  heal();
}

/**
 * Ask `probe` every `stepMs` of simulated time (a world event labelled `label` between asks) until
 * it answers something other than `null`, for less than `withinMs`; answers that, or `null`.
 */
async function poll<T>(host: AimHost, withinMs: number, stepMs: number, label: string, probe: () => T | null): Promise<T | null> {
  for (let waited = 0; waited < withinMs; waited += stepMs) {
    const found = probe();
    if (found !== null) return found;
    await host.sleep(stepMs, label);
  }
  return null;
}

/** The member whose term holds back, in its lease-wait, two or more requests of one namespace, and what it holds back; `null` when none does. */
function holdingBack(world: SimWorld): { readonly member: string; readonly what: string } | null {
  for (const id of world.ids()) {
    for (const term of world.memberOf(id)?.runtime.terms ?? []) {
      if (term === null || term.isEnded) continue;
      const places = Object.entries(term.heldBackPlaces());
      if (!places.some(([, line]) => line.length >= 2)) continue;
      return { member: id, what: places.map(([ns, line]) => `${ns}: ${line.map((p) => p.requestId).join(", ")}`).join("; ") };
    }
  }
  return null;
}

/**
 * `aim-stop-in-lease-wait`: a stop of a leader inside its lease-wait, with requests held back (the
 * hand-over entry carries their places, and the taker keeps them for their re-sent `requestId`s).
 * A lease-wait follows a shard taken without its table: the standby of a row is crashed, then,
 * once the row records it not in sync (or a third of a lease later), its leader (two failures:
 * nothing is promised of the locks then, but the queue order of requests that arrive afterwards
 * still holds). Both restart `downMs` later. Once some term holds back two requests of one
 * namespace, its member gets SIGTERM (restarted `lasts` ms after it stopped).
 */
async function stopInLeaseWait(host: AimHost, downMs: number, lasts: number): Promise<void> {
  const { world } = host;
  const kind: AimedKind = "aim-stop-in-lease-wait";
  const row = world.store.readLeases().find((r) => !r.expired && r.holder !== null && r.inSync && r.standbyId !== null && r.standbyId !== r.holder);
  if (row === undefined || row.holder === null || row.standbyId === null) {
    host.log(`aimed (${kind}): no row with an in-sync standby`);
    return;
  }
  const { holder, standbyId, shard } = row;
  const standbyDown = host.failure("crash", `aimed (${kind}): crash of ${standbyId}, standby of shard ${shard}, until ${downMs} ms after its leader's`);
  world.crash(standbyId);
  await poll(host, world.settings.leaderLeaseMs / 3, 20, "standby recorded not in sync?", () => (world.store.readLeases()[shard]?.inSync === true ? null : true));
  const leaderDown = host.failure("crash", `aimed (${kind}): crash of ${holder}, leader of shard ${shard}, for ${downMs} ms`);
  world.crash(holder);
  await host.sleep(downMs, `restart ${standbyId} and ${holder}`);
  world.start(standbyId);
  world.start(holder);
  standbyDown();
  leaderDown();
  const found = await poll(host, 12_000, 25, "held back?", () => holdingBack(world));
  if (found === null) {
    host.log(`aimed (${kind}): no term held back two requests of one namespace within 12 s`);
    return;
  }
  const { member, what } = found;
  const heal = host.failure("sigterm", `aimed (${kind}): sigterm of ${member} inside its lease-wait (holding back ${what}), restarted ${lasts} ms after it stopped`);
  await world.terminate(member);
  await host.sleep(lasts, `restart ${member}`);
  world.start(member);
  heal();
}
