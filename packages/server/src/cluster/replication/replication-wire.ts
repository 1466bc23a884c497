/**
 * The server-to-server replication exchange (DESIGN.md "Locks that outlive their leader"): a leader
 * POSTs to its standby's `/v1/internal/replication/{shard}` a snapshot of the shard's table, then
 * batches of the shard's log; the standby answers the highest sequence number it holds (a
 * cumulative acknowledgement). Entries and snapshots are opaque JSON values here: what they hold is
 * the engine's business, applied on the standby through a callback.
 */

/** Path prefix of the replication route. */
export const REPLICATION_PATH_PREFIX = "/v1/internal/replication/";

/** The replication route of `shard`. */
export function replicationPath(shard: number): string {
  return `${REPLICATION_PATH_PREFIX}${shard}`;
}

/**
 * Which stream a message belongs to. One term of one shard (`shard`, `epoch`) on one leader process
 * (`leaderIncarnation`) sends to one standby process (`standbyIncarnation`); each snapshot starts a
 * new stream (`streamId`), and entries apply only on the stream whose snapshot the standby holds.
 */
export interface StreamIdentity {
  readonly shard: number;
  /** The leader's epoch of the shard: the replica is of this epoch. */
  readonly epoch: number;
  /** The `leaderId` of the term (the standby's table serves under it after a takeover). */
  readonly leaderId: string;
  /** The leader process's incarnation. */
  readonly leaderIncarnation: string;
  /** The incarnation the leader named as standby: another incarnation (a restart) refuses. */
  readonly standbyIncarnation: string;
  /** Random per snapshot sent. */
  readonly streamId: string;
}

/** A snapshot: the shard's table as of log sequence `seq` (every entry up to `seq` is in it). */
export interface SnapshotMessage {
  readonly kind: "snapshot";
  readonly stream: StreamIdentity;
  readonly seq: number;
  readonly snapshot: unknown;
}

/** Log entries `fromSeq + 1`, `fromSeq + 2`, … in order. */
export interface EntriesMessage {
  readonly kind: "entries";
  readonly stream: StreamIdentity;
  readonly fromSeq: number;
  readonly entries: readonly unknown[];
}

/** What a leader sends. */
export type ReplicationMessage = SnapshotMessage | EntriesMessage;

/** A standby's answer: it holds every entry up to `ackedSeq` of the stream. */
export interface ReplicationAck {
  readonly ackedSeq: number;
}

/** Why a standby refused a message: the leader acts on the code. */
export type RefusalCode =
  /** Not signed with the cluster key (401). */
  | "UNAUTHENTICATED"
  /** Malformed message (400). */
  | "INVALID_ARGUMENT"
  /** The standby holds a replica of a newer epoch, or knows the shard moved on (409). */
  | "STALE_EPOCH"
  /** The standby is another incarnation than the one named: it holds none of the old log (409). */
  | "STANDBY_RESTARTED"
  /** Entries of a stream whose snapshot the standby does not hold, or with a gap (409). */
  | "NEEDS_SNAPSHOT"
  /** A snapshot older than what the standby already applied of the same term (409). */
  | "STALE_SNAPSHOT"
  /** Restoring or applying failed: the replica was dropped and needs a snapshot (409). */
  | "REPLICA_DIVERGED";

/** Every refusal code, for a leader reading a standby's answer. */
export const REFUSAL_CODES: readonly RefusalCode[] = ["UNAUTHENTICATED", "INVALID_ARGUMENT", "STALE_EPOCH", "STANDBY_RESTARTED", "NEEDS_SNAPSHOT", "STALE_SNAPSHOT", "REPLICA_DIVERGED"];

/**
 * The refusal an answer's `error` object holds (`{ code, message, details }` with a known code),
 * as the leader rejects its message with; `null` when it holds none (an unknown outcome).
 */
export function refusalOf(origin: string, error: unknown): ReplicationRefusal | null {
  if (typeof error !== "object" || error === null) return null;
  const { code, message, details } = error as { code?: unknown; message?: unknown; details?: unknown };
  if (typeof code !== "string" || !(REFUSAL_CODES as readonly string[]).includes(code)) return null;
  const known = typeof details === "object" && details !== null ? (details as Record<string, unknown>) : {};
  return new ReplicationRefusal(code as RefusalCode, `the standby at ${origin} refused: ${String(message)}`, known);
}

/** A refusal with its HTTP status and a message that says what and where. */
export class ReplicationRefusal extends Error {
  override name = "ReplicationRefusal";
  constructor(
    readonly code: RefusalCode,
    message: string,
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
  }

  /** 401, 400 or 409. */
  get status(): number {
    return this.code === "UNAUTHENTICATED" ? 401 : this.code === "INVALID_ARGUMENT" ? 400 : 409;
  }

  /** The protocol's error body shape. */
  toJSON(): { error: { code: RefusalCode; message: string; details: Readonly<Record<string, unknown>> } } {
    return { error: { code: this.code, message: this.message, details: this.details } };
  }
}

const bad = (path: string, what: string): ReplicationRefusal => new ReplicationRefusal("INVALID_ARGUMENT", `replication message: ${path} ${what}`, { path });

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function seqAt(value: unknown, path: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) throw bad(path, "must be a non-negative integer");
  return value;
}

function textAt(value: unknown, path: string): string {
  if (typeof value !== "string" || value.length === 0 || value.length > 200) throw bad(path, "must be a string of 1 to 200 characters");
  return value;
}

function parseStream(value: unknown, shard: number): StreamIdentity {
  if (!isObject(value)) throw bad("stream", "must be an object");
  const s = seqAt(value.shard, "stream.shard");
  if (s !== shard) throw bad("stream.shard", `is ${s} but the route names shard ${shard}`);
  return {
    shard,
    epoch: seqAt(value.epoch, "stream.epoch"),
    leaderId: textAt(value.leaderId, "stream.leaderId"),
    leaderIncarnation: textAt(value.leaderIncarnation, "stream.leaderIncarnation"),
    standbyIncarnation: textAt(value.standbyIncarnation, "stream.standbyIncarnation"),
    streamId: textAt(value.streamId, "stream.streamId"),
  };
}

/**
 * Check a decoded body sent to the route of `shard`; throws an `INVALID_ARGUMENT` refusal naming the
 * field. `previous`: the stream of the message before it on the same replication stream
 * connection, which an entries message without `stream` continues (stream-replication-codec.ts);
 * `null` (the one-message route, or the first message of a connection): `stream` is required.
 */
export function parseReplicationMessage(value: unknown, shard: number, previous: StreamIdentity | null = null): ReplicationMessage {
  if (!isObject(value)) throw bad("(body)", "must be a JSON object");
  const stream = value.stream === undefined && previous !== null && value.kind === "entries" ? previous : parseStream(value.stream, shard);
  if (value.kind === "snapshot") {
    if (!("snapshot" in value)) throw bad("snapshot", "is missing");
    return { kind: "snapshot", stream, seq: seqAt(value.seq, "seq"), snapshot: value.snapshot };
  }
  if (value.kind === "entries") {
    if (!Array.isArray(value.entries)) throw bad("entries", "must be an array");
    return { kind: "entries", stream, fromSeq: seqAt(value.fromSeq, "fromSeq"), entries: value.entries };
  }
  throw bad("kind", `must be "snapshot" or "entries" (got ${JSON.stringify(value.kind)?.slice(0, 40)})`);
}

/** The shard of a replication route's path, or `null` when the path is not one. */
export function shardOfPath(path: string): number | null {
  if (!path.startsWith(REPLICATION_PATH_PREFIX)) return null;
  const rest = path.slice(REPLICATION_PATH_PREFIX.length);
  if (!/^(0|[1-9]\d{0,8})$/.test(rest)) return null;
  return Number(rest);
}
