import type { MemoryStore } from "@leasehold/server/internal";
import type { Violation } from "./sim-records.js";

/**
 * What the in-memory database's lease rows say now (the fault plan aims by them and waits for the
 * cluster to be whole again), and the `protected-claim` check of them against the world's deaths.
 * Reads only: it draws nothing and schedules nothing.
 */
export class LeaseRows {
  /** When each process incarnation that had joined died (crash or the end of a stop), by incarnation. */
  private readonly deaths = new Map<string, number>();
  /** Shards already reported by {@link checkStandbyClaims} (once each). */
  private readonly claimBroken = new Set<number>();

  constructor(
    private readonly store: MemoryStore,
    private readonly now: () => number,
    private readonly violated: (v: Violation) => void,
  ) {}

  /** The process incarnation `incarnation` died now. */
  died(incarnation: string): void {
    this.deaths.set(incarnation, this.now());
  }

  /**
   * The promise behind "protected" (DESIGN.md "Protected", PROTOCOL.md `GET /v1/health`): a row
   * its leader still renews never names as its in-sync standby a process that died more than
   * `withinMs` ago (a leader asks even an idle shard's standby for an acknowledgement, and records
   * one that does not answer not in sync). Otherwise the cluster says it is protected while a crash
   * of that leader loses every lock of the shard, and a deploy tool restarts the next server.
   */
  checkStandbyClaims(withinMs: number): void {
    for (const r of this.store.readLeases()) {
      if (r.expired || !r.inSync || r.standbyIncarnation === null || this.claimBroken.has(r.shard)) continue;
      const died = this.deaths.get(r.standbyIncarnation);
      if (died === undefined || this.now() - died <= withinMs) continue;
      this.claimBroken.add(r.shard);
      this.violated({
        invariant: "protected-claim",
        detail: `shard ${r.shard} (epoch ${r.epoch}, led by ${r.holder ?? "nobody"}) names ${r.standbyId ?? "?"}'s process that died at ${died.toFixed(1)} its in-sync standby at ${this.now().toFixed(1)}`,
      });
    }
  }

  /** True when every shard has a live leader whose row names an in-sync standby (the database's view). */
  protectedNow(): boolean {
    return this.store.readLeases().every((r) => !r.expired && r.inSync && r.standbyId !== null);
  }

  /** The server leading the most shards now (by the database's rows), `null` when none leads any. */
  busiestLeader(): string | null {
    const led = new Map<string, number>();
    for (const r of this.store.readLeases()) if (!r.expired && r.holder !== null) led.set(r.holder, (led.get(r.holder) ?? 0) + 1);
    let best: string | null = null;
    for (const [id, n] of led) if (best === null || n > led.get(best)! || (n === led.get(best)! && id < best)) best = id;
    return best;
  }

  /** A member `leader`'s live rows name as their in-sync standby (the lowest shard's), `null` when none. */
  standbyOf(leader: string): string | null {
    for (const r of this.store.readLeases()) if (!r.expired && r.holder === leader && r.inSync && r.standbyId !== null && r.standbyId !== leader) return r.standbyId;
    return null;
  }

  /** True when every shard has a live leader. */
  ledNow(): boolean {
    return this.store.readLeases().every((r) => !r.expired);
  }
}
