import type { CliServer } from "../cli-server.js";
import type { ClusterMember } from "./cluster-members.js";
import { sleep } from "./control-cluster.js";

/** What a duplicate-server-id cycle saw (issue 20). */
export interface DuplicateIdOutcome {
  /** The server id both processes ran with. */
  readonly serverId: string;
  /** The duplicate's JSON log lines (its serve intervals join the one-leader-per-shard check). */
  readonly lines: readonly Record<string, unknown>[];
  /** What broke the cycle's own rules (empty when none): each becomes a `duplicate server id` violation. */
  readonly problems: readonly string[];
}

/** How many leader leases the duplicate runs beside the original once it spoke: past its join wait. */
export const DUPLICATE_LEASES = 3;

/** How long the duplicate may take to join and run its first pass (a loaded 2-core machine). */
const SAY_WITHIN_MS = 15_000;

/**
 * The duplicate-server-id fault: start a second process with the `--server-id` of `victim` (a live
 * leader) for {@link DUPLICATE_LEASES} leader leases, while the clients keep working, then SIGTERM
 * it. Checks of the cycle (the run's checks cover the rest: timestamps, fencing, holds, one leader
 * per shard with the duplicate's serve intervals included):
 * - the duplicate says, naming the id, that another live process runs with it, and acquires no
 *   shard while the original lives (it waits as a plain member);
 * - the original loses no shard because its row was released under it ("the renewal matched
 *   nothing": before the fix the duplicate released the original's rows as its own);
 * - the duplicate's SIGTERM exits 0 and leaves the original's member row alone.
 */
export async function runDuplicateId(victim: ClusterMember, leaderLeaseMs: number): Promise<DuplicateIdOutcome> {
  const original = victim.server;
  const serverId = original.lines.find((l) => l.msg === "listening")?.serverId;
  if (typeof serverId !== "string") return { serverId: "?", lines: [], problems: [`member ${victim.index} logged no serverId in its listening line`] };
  const from = original.lines.length;
  const problems: string[] = [];
  let duplicate: CliServer;
  try {
    duplicate = await victim.startDuplicate(serverId);
  } catch (err) {
    return { serverId, lines: [], problems: [`the duplicate of ${serverId} did not start: ${err instanceof Error ? err.message : String(err)}`] };
  }
  try {
    // It listens before it has joined (a slow PostgreSQL under load): give its first passes time to
    // run, then watch it beside the original for DUPLICATE_LEASES leader leases.
    const said = (): boolean => duplicate.lines.some((l) => typeof l.msg === "string" && l.msg.includes(`another live process runs with --server-id ${JSON.stringify(serverId)}`));
    const acquired = (): boolean => duplicate.lines.some((l) => l.msg === "shard acquired");
    const deadline = performance.now() + SAY_WITHIN_MS;
    while (!said() && !acquired() && performance.now() < deadline) await sleep(20);
    await sleep(leaderLeaseMs * DUPLICATE_LEASES);
    const originalLived = victim.alive;
    if (!said()) {
      const last = duplicate.lines.slice(-3).map((l) => String(l.msg));
      problems.push(`the duplicate of ${serverId} never said that another live process runs with its id (last lines: ${JSON.stringify(last)})`);
    }
    if (originalLived) {
      for (const l of duplicate.lines.filter((x) => x.msg === "shard acquired")) problems.push(`the duplicate of ${serverId} acquired shard ${String(l.shard)} (epoch ${String(l.epoch)}) while the original lived`);
    }
    for (const l of original.lines.slice(from)) {
      if (l.msg === "shard lost" && typeof l.reason === "string" && l.reason.includes("renewal matched nothing")) {
        problems.push(`${serverId} lost shard ${String(l.shard)} (epoch ${String(l.epoch)}) while its duplicate ran: "${l.reason}"`);
      }
    }
  } finally {
    const code = await duplicate.stop();
    if (code !== 0) problems.push(`the duplicate of ${serverId} exited ${String(code)} on SIGTERM, not 0`);
  }
  return { serverId, lines: duplicate.lines, problems };
}
