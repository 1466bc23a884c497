import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import type { LiveMember, MemberIdentity, ShardLease } from "./coordinator.js";

/**
 * Who this process is in the cluster's tables: its `--server-id` and its incarnation, a random id
 * minted at every start and kept in its member row and in the lease rows it acquires, so a second
 * live process with the same server id never takes this one's rows (or this one theirs) for its own
 * (docs/cluster.md "Two processes with one server id", ADR 0009). It also follows whether the
 * member row of the server id is this process's: another live process may hold it, and this one
 * then leads nothing and waits as a plain member until that heartbeat lapses.
 */
export class MemberIdentityWatch implements MemberIdentity {
  readonly incarnation = randomUUID();
  /**
   * When this process's heartbeat first held the member row (the join wait counts from it), `null`
   * while another live process with the same server id holds it.
   */
  private claimed: number | null = null;
  /** True once a heartbeat found the server id held by another live process (for the log lines). */
  private duplicate = false;

  constructor(
    readonly serverId: string,
    private readonly logger: Logger,
  ) {}

  /** When the member row became this process's (monotonic ms), `null` while it is not. */
  get claimedAt(): number | null {
    return this.claimed;
  }

  /** True when `row` was acquired by this process (its server id and its incarnation). */
  isOwn(row: ShardLease): boolean {
    return row.holder === this.serverId && row.incarnation === this.incarnation;
  }

  /**
   * A heartbeat sent at `sentAt` answered `members`, which name this server id only when the member
   * row is this process's. Answers `"lost"` when the row was this process's and no longer is
   * (another process took the id over while this one was paused: the caller ends every term), else
   * `null`. Logs once when it finds another live process holding the id, and when it takes over.
   */
  observe(members: readonly LiveMember[], sentAt: number): "lost" | null {
    const { serverId, incarnation, logger } = this;
    const own = members.some((m) => m.serverId === serverId);
    let lost = false;
    if (own && this.claimed === null) {
      this.claimed = sentAt;
      if (this.duplicate) logger.warn({ serverId, incarnation }, "the other process with this --server-id stopped heartbeating; this one now takes its place in the cluster");
      this.duplicate = false;
    } else if (!own && this.claimed !== null) {
      this.claimed = null;
      lost = true;
    }
    if (!own && !this.duplicate) {
      this.duplicate = true;
      logger.error(
        { serverId, incarnation },
        `another live process runs with --server-id ${JSON.stringify(serverId)}: this one leads nothing and waits as a plain member until that process's heartbeat lapses (two leader leases); give every process its own --server-id`,
      );
    }
    return lost ? "lost" : null;
  }
}
