import type { RefreshResponse } from "@leasehold/protocol";
import { SimCaller } from "./sim-caller.js";
import type { SimHistory } from "./sim-history.js";
import type { Leased } from "./sim-records.js";
import type { SimRandom } from "./sim-random.js";
import type { SimServers } from "./sim-client.js";
import type { Scheduler } from "./scheduler.js";

/**
 * How a client keeps what it holds, drawn once per client (fork `traits`, so the streams of
 * everything else are unchanged by it).
 */
export interface HoldingTraits {
  /**
   * A late refresher (a GC pause, an overloaded host): each refresh is sent at a random point
   * between 0.3 and 0.9 of the last `validForMs` after the previous one was sent, still inside its
   * guarantee; otherwise at a third of it.
   */
  readonly lateRefresher: boolean;
  /** Chance that the client "crashes" while it holds something: it stops refreshing and never unlocks, so the lease lapses on the server. */
  readonly crash: number;
}

/** Draw a client's {@link HoldingTraits}. */
export function drawTraits(random: SimRandom): HoldingTraits {
  return { lateRefresher: random.chance(0.4), crash: random.pick([0, 0.05, 0.15]) };
}

/**
 * A simulated client that holds leases (locks, transactions' immutable-timestamp locks): it
 * refreshes them (on time, or late within the guarantee), unlocks them without waiting for the
 * answer (`tryUnlock`), or crashes and leaves them to lapse.
 */
export abstract class SimLeaseHolder extends SimCaller {
  protected readonly traits: HoldingTraits;
  /** Draws for the traits' behaviour (when to refresh, when to crash). */
  private readonly holding: SimRandom;

  constructor(name: string, scheduler: Scheduler, servers: SimServers, random: SimRandom, protected readonly history: SimHistory) {
    super(name, scheduler, servers, random);
    this.traits = drawTraits(random.fork("traits"));
    this.holding = random.fork("holding");
  }

  /** Unlock `lease` now without waiting for the answer (the client stops using it at once). */
  protected letGo(lease: Leased): void {
    this.history.released(lease, this.scheduler.now);
    void this.routed(lease.namespace, "unlock", this.scheduler.now + 1_000, (s) => s.unlock(lease.namespace, { tokens: [lease.token] })).catch(() => null);
  }

  /**
   * Hold `lease` until `until`, refreshing it (see {@link HoldingTraits}); then unlock it without
   * waiting for the answer. `during` runs at each refresh while it is held (a transaction reads
   * the immutable timestamp). A crashing client stops at a random refresh, holding on.
   */
  protected async keep(lease: Leased, validForMs: number, until: number, during?: () => Promise<void>): Promise<void> {
    const crashAfter = this.traits.crash > 0 && this.holding.chance(this.traits.crash) ? this.holding.int(0, 2) : Infinity;
    let valid = validForMs;
    let lastSent = lease.sentAt;
    for (let refreshes = 0; this.scheduler.now < until; refreshes++) {
      if (refreshes >= crashAfter) return;
      const gap = this.traits.lateRefresher ? Math.floor(valid * (0.3 + 0.6 * this.holding.float())) : Math.floor(valid / 3);
      const every = Math.max(10, gap);
      const nextAt = this.traits.lateRefresher ? Math.max(this.scheduler.now, lastSent + every) : this.scheduler.now + every;
      await this.wait(Math.min(nextAt, until) - this.scheduler.now);
      if (this.scheduler.now >= until) break;
      if (during !== undefined) await during();
      const sentAt = this.scheduler.now;
      lastSent = sentAt;
      const answer: RefreshResponse | null = await this.routed(lease.namespace, "refresh", sentAt + Math.max(10, Math.floor(valid / 3)), (s) => s.refresh(lease.namespace, { tokens: [lease.token] })).catch(() => null);
      if (answer === null) continue;
      const kept = answer.refreshed.includes(lease.token);
      this.history.refreshed(lease, sentAt, kept, answer.lease.validForMs, this.scheduler.now, answer.lease.leaderId);
      if (!kept) return;
      valid = answer.lease.validForMs;
    }
    this.letGo(lease);
  }
}
