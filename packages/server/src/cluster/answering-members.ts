import type { LiveMember, ShardLease } from "./coordinator.js";
import type { ProbeResult } from "./health-prober.js";

/** What {@link AnsweringMembers} is made with. */
export interface AnsweringMembersOptions {
  /** This server (never probed; always answering to itself). */
  readonly serverId: string;
  /** One probe of a member's health route (`HealthProber.probe` in production); never rejects. */
  readonly probe: (serverId: string, url: string) => Promise<ProbeResult>;
  /** How long a good answer counts: the leader lease (DESIGN.md). */
  readonly freshMs: number;
  /** Monotonic clock (ms). Default `performance.now()`. */
  readonly clock?: (() => number) | undefined;
}

interface Heard {
  /** When the last good answer's probe was sent (`-Infinity`: none yet). */
  goodAt: number;
  /** When the last failed probe was sent (`-Infinity`: none). */
  badAt: number;
  inFlight: boolean;
}

/**
 * Which listed members answer (DESIGN.md "Hand-over with state"): a heartbeat row stays fresh for
 * two leader leases after its process died, and a survivor that counted a dead member in the
 * shares balanced shards to it (issue 29). A member answers while its last health probe answered,
 * sent less than a leader lease ago, and none of its own lease rows (of its incarnation) has
 * expired: a member that heartbeats but whose terms lapse is sick, not ready. Probes are started
 * by {@link observe} (each heartbeat, a third of a leader lease), one in flight per ready member: a
 * killed process refuses the next one at once.
 */
export class AnsweringMembers {
  private readonly heard = new Map<string, Heard>();
  private readonly clock: () => number;

  constructor(private readonly options: AnsweringMembersOptions) {
    this.clock = options.clock ?? (() => performance.now());
  }

  /**
   * Probe every listed ready member but this one (not already being probed); forget those no
   * longer listed. A member in its join wait takes no shard and counts in no share, so it is not
   * probed until it says it is ready.
   */
  observe(members: readonly LiveMember[]): void {
    const listed = new Set(members.map((m) => m.serverId));
    for (const id of this.heard.keys()) if (!listed.has(id)) this.heard.delete(id);
    for (const member of members) {
      if (member.serverId === this.options.serverId || member.url === undefined || !member.ready) continue;
      let heard = this.heard.get(member.serverId);
      if (heard === undefined) this.heard.set(member.serverId, (heard = { goodAt: -Infinity, badAt: -Infinity, inFlight: false }));
      if (heard.inFlight) continue;
      heard.inFlight = true;
      const sentAt = this.clock();
      const entry = heard;
      void this.options.probe(member.serverId, member.url).then((result) => {
        entry.inFlight = false;
        if (result.answering) entry.goodAt = Math.max(entry.goodAt, sentAt);
        else entry.badAt = Math.max(entry.badAt, sentAt);
      });
    }
  }

  /**
   * True when `member` answers now (see the class); `leases` are the rows as last read. This server,
   * and a member without a known URL (a list not read from the database), always answer.
   */
  answering(member: LiveMember, leases: readonly Pick<ShardLease, "holder" | "incarnation" | "expired">[]): boolean {
    if (member.serverId === this.options.serverId || member.url === undefined) return true;
    const heard = this.heard.get(member.serverId);
    if (heard === undefined || heard.goodAt <= heard.badAt || this.clock() - heard.goodAt > this.options.freshMs) return false;
    const incarnation = member.incarnation ?? null;
    return !leases.some((row) => row.expired && row.holder === member.serverId && (incarnation === null || row.incarnation === incarnation));
  }
}
