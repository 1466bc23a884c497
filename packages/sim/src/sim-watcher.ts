import type { LockWatchSince, LockWatchUpdate } from "@leasehold/protocol";
import { REQUEST_TIMEOUT_MS, SimCaller } from "./sim-caller.js";
import type { SimServers } from "./sim-client.js";
import type { SimHistory } from "./sim-history.js";
import type { SimRandom } from "./sim-random.js";
import type { Scheduler } from "./scheduler.js";

/**
 * A simulated lock-watch follower (TimeLock's lock watch service, a read cache's view of what is
 * locked): for each of its namespaces it registers a watch of everything (prefix `""`), then
 * follows the namespace's lock-event log from where it is (`since`), sometimes long-polling, and
 * registers again whenever a snapshot says the watch is gone (a table that started empty). Every
 * answer goes in the {@link SimHistory}.
 */
export class SimWatcher extends SimCaller {
  constructor(
    name: string,
    scheduler: Scheduler,
    servers: SimServers,
    random: SimRandom,
    private readonly history: SimHistory,
    private readonly namespaces: readonly string[],
    private readonly until: number,
  ) {
    super(name, scheduler, servers, random);
  }

  /** Begin following each namespace. */
  start(): void {
    for (const namespace of this.namespaces) void this.follow(namespace);
  }

  private async register(namespace: string): Promise<void> {
    await this.routed(namespace, "lock-watches", this.scheduler.now + 1_000, (s) => s.lockWatches(namespace, { prefixes: [""] })).catch(() => null);
  }

  private async follow(namespace: string): Promise<void> {
    await this.wait(this.random.int(0, 500));
    await this.register(namespace);
    let since: LockWatchSince | null = null;
    while (this.scheduler.now < this.until) {
      const waitMs = this.random.pick([0, 0, 200, 500]);
      const request: { since: LockWatchSince | null; waitMs: number } = { since, waitMs };
      const sentAt = this.scheduler.now;
      const asked = since;
      const update: LockWatchUpdate | null = await this.routed(namespace, "lock-events", sentAt + waitMs + 1_000, (s) => s.lockEvents(namespace, request), waitMs + REQUEST_TIMEOUT_MS).catch(() => null);
      if (update !== null) {
        this.history.watched(this.name, namespace, asked, update, sentAt, this.scheduler.now);
        since = { logId: update.logId, version: update.version };
        if (update.type === "snapshot" && !update.prefixes.includes("")) await this.register(namespace);
      }
      await this.wait(this.random.int(30, 300));
    }
  }
}
