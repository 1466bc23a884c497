import type { SimProcess } from "./sim-clock.js";
import type { Violation } from "./sim-records.js";

/**
 * The line the shard mover logs as a move begins (replication/shard-mover.ts `syncThenHandOver`),
 * with `reason` (`"balance"` or `"sigterm"`), `shard`, `epoch` and `taker` (a balance move's server
 * id): the decision the reliability suite counts (packages/reliability cluster-repeated-crash,
 * `movesToDead`), observed here from the servers' logger (sim-logger.ts).
 */
export const MOVE_BEGIN_LINE = "getting an in-sync standby before handing the shard over";

/**
 * Room the `balance-target` check leaves beyond the leader lease (see {@link balanceTargetBoundMs}):
 * a tenth of the simulator's leader lease, so the check states the promise and not the code's
 * arithmetic to the millisecond.
 */
export const BALANCE_TARGET_SLACK_MS = 100;

/**
 * How long a member may have been silent, on the mover's monotonic clock, when a balance move
 * towards it begins: `leaderLeaseMs` + {@link BALANCE_TARGET_SLACK_MS} (1,100 ms in `pnpm sim`).
 *
 * Derived from the rule (answering-members.ts, health-prober.ts, shard-mover.ts `targets()`): a
 * member answers while its last good health probe was *sent* less than a leader lease
 * (`freshMs`) ago on the prober's monotonic clock, and no failed probe was sent after it. A probe
 * sent while the member was silent can only be answered once it answers again, so while it is
 * silent its last good probe was sent before the silence began; a leader lease after that, on the
 * mover's clock, the member no longer answers, whatever the probe period (a third of a leader
 * lease, one probe in flight at a time: it only decides how soon a failure is *seen*, not how long
 * an old answer counts) and the pass cadence (the mover asks `answering` again right before it
 * logs the move's begin, after its read of the member rows, in the same turn; nothing is cached
 * from the pass that planned it). The clock is the mover's own monotonic one, as the code's: it
 * stands still while the mover is paused and drifts with it (at most 5%).
 */
export function balanceTargetBoundMs(leaderLeaseMs: number): number {
  return leaderLeaseMs + BALANCE_TARGET_SLACK_MS;
}

/** One balance move's begin, with the world's truth about its taker then. */
export interface BalanceMove {
  /** The mover's process (`s0#2`). */
  readonly mover: string;
  /** The taker's server id. */
  readonly taker: string;
  readonly shard: number;
  readonly epoch: number;
  /** True time the move began (the line was logged). */
  readonly at: number;
  /** True time since which no process of the taker could answer a probe, `null` while one could. */
  readonly silentSince: number | null;
  /** Why it fell silent then (`paused`, `crashed`, `stopping`, `starting`, …), `null` while it answers. */
  readonly silentWhy: string | null;
  /** How long it had been silent on the mover's monotonic clock (0 while it answers). */
  readonly silentForMs: number;
  /** The bound that applied ({@link balanceTargetBoundMs} of the cluster's leader lease). */
  readonly boundMs: number;
}

/**
 * `balance-target`: no balance move begins towards a member that has not answered for longer than
 * the bound (only a member that answers may be a balance target, DESIGN.md "Hand-over with
 * state"; the `balance-to-silent-member` rule). Availability, not safety: such a move holds the
 * mover's one move slot for up to three leader leases, delays a stop, and a standby move to an
 * unresponsive taker makes grants wait for its acknowledgement until given up. One violation per
 * silent spell of a member (the first move towards it past the bound).
 */
export function balanceTargets(moves: readonly BalanceMove[]): Violation[] {
  const out: Violation[] = [];
  const seen = new Set<string>();
  for (const m of moves) {
    if (m.silentSince === null || m.silentForMs <= m.boundMs) continue;
    const spell = `${m.taker}@${m.silentSince}`;
    if (seen.has(spell)) continue;
    seen.add(spell);
    out.push({
      invariant: "balance-target",
      detail: `${m.mover} began a balance move of shard ${m.shard} (epoch ${m.epoch}) to ${m.taker} at ${m.at.toFixed(1)}, but ${m.taker} had not answered since ${m.silentSince.toFixed(1)} (${m.silentWhy ?? "silent"}): ${m.silentForMs.toFixed(0)} ms on the mover's clock, more than the ${m.boundMs} ms in which a member that does not answer stops being a balance target`,
    });
  }
  return out;
}

/** What a spell's reason says once a probe held back during it was answered (the spell begins again then). */
const HELD = ", then answered a probe held back while paused";

/** A silent spell of a member: since when, why, and every live process's monotonic reading then. */
interface Spell {
  readonly at: number;
  readonly why: string;
  readonly mono: ReadonlyMap<string, number>;
}

/**
 * The world's truth about which members answer a health probe (sim-world.ts `probe`: a process of
 * the member's id that listens, runs and is not paused), and since when each that does not has
 * not: the spell begins when its last process stops answering (crash, pause, SIGTERM, a start not
 * yet listening) and moves on whenever a probe held back meanwhile is still answered (a paused
 * process answers the probes delivered before its pause once it resumes, stopping or not). It
 * draws nothing and schedules nothing: the runs' events are as without it.
 */
export class MemberSilence {
  private readonly spells = new Map<string, Spell>();
  /** Each process's monotonic reading when it started (a mover started after a spell began has never heard the member). */
  private readonly started = new Map<string, number>();

  constructor(
    private readonly now: () => number,
    private readonly processes: () => Iterable<SimProcess>,
  ) {}

  /** `process` started now. */
  processStarted(process: SimProcess): void {
    this.started.set(process.name, process.now());
  }

  /** Member `id` can answer a probe now (`answers`), or not, having fallen silent by `why`. */
  note(id: string, answers: boolean, why: string): void {
    if (answers) this.spells.delete(id);
    else if (!this.spells.has(id)) this.begin(id, why);
  }

  /** A process of member `id` answered a probe now (one held back while it was paused, or any). */
  answeredProbe(id: string): void {
    const spell = this.spells.get(id);
    if (spell !== undefined) this.begin(id, spell.why.endsWith(HELD) ? spell.why : `${spell.why}${HELD}`);
  }

  /** The begin of a balance move by `mover` towards `taker` now, as {@link balanceTargets} checks it. */
  move(mover: SimProcess, taker: string, shard: number, epoch: number, boundMs: number): BalanceMove {
    const spell = this.spells.get(taker);
    const at = this.now();
    if (spell === undefined) return { mover: mover.name, taker, shard, epoch, at, silentSince: null, silentWhy: null, silentForMs: 0, boundMs };
    const from = spell.mono.get(mover.name) ?? this.started.get(mover.name) ?? mover.now();
    return { mover: mover.name, taker, shard, epoch, at, silentSince: spell.at, silentWhy: spell.why, silentForMs: mover.now() - from, boundMs };
  }

  private begin(id: string, why: string): void {
    const mono = new Map<string, number>();
    for (const p of this.processes()) if (p.alive) mono.set(p.name, p.now());
    this.spells.set(id, { at: this.now(), why, mono });
  }
}
