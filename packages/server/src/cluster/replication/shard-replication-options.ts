import type { Logger } from "pino";
import type { Coordinator, LeaderTerm, MemberIdentity } from "../coordinator.js";
import type { ReplicationClock } from "./replication-clock.js";
import type { ReplicationMetrics } from "./replication-metrics.js";
import type { ReplicationTransport } from "./replication-sender.js";

/** A member to stream to: its identity and where it listens. */
export interface StandbyTarget extends MemberIdentity {
  readonly url: string;
}

/** What a {@link ShardReplication} is made with. */
export interface ShardReplicationOptions {
  /** The leader's term: every standby write is fenced by it. */
  readonly term: LeaderTerm;
  /** The term's `leaderId` (a standby's table serves under it after a takeover). */
  readonly leaderId: string;
  /** `moveStandby` is optional: without it {@link ShardReplication.moveStandby} moves nothing. */
  readonly coordinator: Pick<Coordinator, "nameStandby" | "setInSync"> & Partial<Pick<Coordinator, "moveStandby">>;
  /** A connection to a standby (http-replication-transport.ts in production). */
  readonly connect: (target: StandbyTarget) => ReplicationTransport;
  /**
   * The shard's table now, as an opaque JSON value, taken at one moment (`snapshotShard`): called
   * synchronously right before the log's position is taken. Taking it may append entries (a
   * serving table catches up first and reaps what lapsed); they are in it, and before the
   * position, so it holds every entry up to the position and none after.
   */
  readonly snapshot: () => unknown;
  readonly clock: ReplicationClock;
  /** A third of the leader lease: see {@link SyncRuleOptions.lateMs}. */
  readonly lateMs: number;
  readonly logger: Logger;
  /** Default: none. */
  readonly metrics?: ReplicationMetrics | undefined;
  /** A standby write matched nothing: this server no longer leads the shard (the owner ends the term). */
  readonly onFenced: () => void;
  /**
   * The standby is no longer in sync (late, refused the stream, or detached), and the row says so:
   * the owner attaches one again when it can (the same member after a pause, or another).
   */
  readonly onStandbyLost: (reason: string) => void;
  /** TEST ONLY: see {@link SyncRuleOptions.unsafeAnswerFirst}. Default false. */
  readonly unsafeAnswerFirst?: boolean | undefined;
  /**
   * TEST ONLY (`LEASEHOLD_TEST_BREAK=snapshot-after-position`): the log's position is taken before
   * the snapshot, so what taking it reaps is both in the image and after the position (the standby
   * refuses it as diverged). Default false.
   */
  readonly unsafeSnapshotAfterPosition?: boolean | undefined;
  /**
   * TEST ONLY (`LEASEHOLD_TEST_BREAK=move-unknown-as-failed`): a standby move whose row update's
   * outcome is unknown is given up as if it had not committed (the new standby dropped, the former
   * alone waited on), though the row may name the new one. Default false.
   */
  readonly unsafeUnknownMoveAsFailed?: boolean | undefined;
  /** Most messages in flight to the standby: see `ReplicationSenderOptions.maxInFlight`. Default: the sender's (64). */
  readonly maxInFlight?: number | undefined;
}
