import { Type } from "@sinclair/typebox";
import { LIMITS } from "./limits.js";
import { LockWatchUpdateSchema, StartLockWatchSchema } from "./lock-watch-schemas.js";

/**
 * The one schema source of protocol v1. Types are derived from these with `Static` (see
 * `types.ts`) and the same objects validate at run time (see `validation.ts`), so the two never
 * drift. Every object refuses unknown properties: a typo never silently changes a request.
 */
const strict = { additionalProperties: false } as const;

/** Lock modes, in the order the protocol lists them. */
export const LOCK_MODES = ["exclusive", "shared", "permit"] as const;
/** Acquisition behaviours of a `lock` request. */
export const LOCK_BEHAVIORS = ["all-or-none", "as-many-as-possible"] as const;

/** A descriptor: 1..1024 UTF-8 bytes, well-formed Unicode (the byte and surrogate checks are in validation.ts). */
export const DescriptorSchema = Type.String({ minLength: 1, maxLength: LIMITS.maxDescriptorBytes });
/** An opaque lock token. */
export const TokenSchema = Type.String({ minLength: 1, maxLength: LIMITS.maxTokenLength });
/** A positive safe integer: every timestamp and fencing token. */
export const TimestampSchema = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });

export const LockModeSchema = Type.Union([
  Type.Literal("exclusive"),
  Type.Literal("shared"),
  Type.Literal("permit"),
]);
export const LockBehaviorSchema = Type.Union([
  Type.Literal("all-or-none"),
  Type.Literal("as-many-as-possible"),
]);

export const LockSpecSchema = Type.Object(
  {
    descriptor: DescriptorSchema,
    mode: LockModeSchema,
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMITS.maxPermitLimit })),
  },
  strict,
);

export const LeaseSchema = Type.Object(
  { leaderId: Type.String({ minLength: 1 }), validForMs: Type.Integer({ minimum: 0 }) },
  strict,
);

export const LockRequestSchema = Type.Object(
  {
    requestId: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.maxRequestIdLength })),
    locks: Type.Array(LockSpecSchema, { minItems: 1, maxItems: LIMITS.maxLocksPerRequest }),
    acquireTimeoutMs: Type.Optional(Type.Integer({ minimum: 0, maximum: LIMITS.maxAcquireTimeoutMs })),
    behavior: Type.Optional(LockBehaviorSchema),
    max: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMITS.maxLocksPerRequest })),
    clientDescription: Type.Optional(Type.String({ maxLength: LIMITS.maxClientDescriptionLength })),
  },
  strict,
);

export const AcquiredLockSchema = Type.Object(
  { descriptor: DescriptorSchema, mode: LockModeSchema, fencingToken: TimestampSchema },
  strict,
);

export const LockAcquiredResponseSchema = Type.Object(
  {
    status: Type.Literal("acquired"),
    token: TokenSchema,
    lease: LeaseSchema,
    acquired: Type.Array(AcquiredLockSchema),
  },
  strict,
);
export const LockTimeoutResponseSchema = Type.Object({ status: Type.Literal("timeout") }, strict);
export const LockResponseSchema = Type.Union([LockAcquiredResponseSchema, LockTimeoutResponseSchema]);

/**
 * Body of `lock-batch`: 1..1,000 `lock` request bodies. This is the typed shape; the server checks
 * the envelope with {@link LockBatchEnvelopeSchema} and each entry on its own, so one bad entry is
 * answered on its own line instead of failing the whole batch.
 */
export const LockBatchRequestSchema = Type.Object(
  {
    requests: Type.Array(LockRequestSchema, { minItems: 1, maxItems: LIMITS.maxRequestsPerBatch }),
    compact: Type.Optional(Type.Boolean()),
  },
  strict,
);
/** The envelope of `lock-batch` alone: a whole-batch 400 is decided by this, never by an entry. */
export const LockBatchEnvelopeSchema = Type.Object(
  {
    requests: Type.Array(Type.Unknown(), { minItems: 1, maxItems: LIMITS.maxRequestsPerBatch }),
    compact: Type.Optional(Type.Boolean()),
  },
  strict,
);
/** The `error` of an error body or of a failed batch entry's line. */
export const ErrorObjectSchema = Type.Object(
  {
    code: Type.String(),
    message: Type.String(),
    details: Type.Record(Type.String(), Type.Unknown()),
  },
  strict,
);
const BatchIndexSchema = Type.Integer({ minimum: 0, maximum: LIMITS.maxRequestsPerBatch - 1 });
/** A `lock-batch` line for an entry that got a `lock` answer (`acquired` or `timeout`). */
export const LockBatchResultLineSchema = Type.Object({ index: BatchIndexSchema, result: LockResponseSchema }, strict);
/** A `lock-batch` line for an entry that failed: exactly the error a single `lock` would have had. */
export const LockBatchErrorLineSchema = Type.Object({ index: BatchIndexSchema, error: ErrorObjectSchema }, strict);
/** One NDJSON line of a `lock-batch` answer; lines come in the order entries resolve. */
export const LockBatchLineSchema = Type.Union([LockBatchResultLineSchema, LockBatchErrorLineSchema]);
/**
 * A `lock-batch` line of a compact answer (`compact: true`) that sets the lease of the grant lines
 * after it, until the next lease line. It carries no entry.
 */
export const LockBatchLeaseLineSchema = Type.Object({ lease: LeaseSchema }, strict);
/**
 * A `lock-batch` line of a compact answer for an entry granted every lock it asked for: its token
 * and one fencing token per lock, in the order of the entry's `locks`. The rest of the `lock`
 * answer (status, lease, descriptors and modes) is what the client already knows.
 */
export const LockBatchGrantLineSchema = Type.Object(
  {
    index: BatchIndexSchema,
    token: TokenSchema,
    fencingTokens: Type.Array(TimestampSchema, { minItems: 1, maxItems: LIMITS.maxLocksPerRequest }),
  },
  strict,
);

/** Body of `lock-cancel`: the `requestId` of the lock request to give up. */
export const LockCancelRequestSchema = Type.Object(
  { requestId: Type.String({ minLength: 1, maxLength: LIMITS.maxRequestIdLength }) },
  strict,
);
/** Answer of `lock-cancel`: whether a live request (waiting or held) with that id was found. */
export const LockCancelResponseSchema = Type.Object({ cancelled: Type.Boolean() }, strict);

const TokenList = Type.Array(TokenSchema, { minItems: 1, maxItems: LIMITS.maxTokensPerRequest });

export const UnlockRequestSchema = Type.Object({ tokens: TokenList }, strict);
export const UnlockResponseSchema = Type.Object({ unlocked: Type.Array(TokenSchema) }, strict);

export const RefreshRequestSchema = Type.Object({ tokens: TokenList }, strict);
export const RefreshResponseSchema = Type.Object(
  { refreshed: Type.Array(TokenSchema), lease: LeaseSchema },
  strict,
);

export const TimestampsRequestSchema = Type.Object(
  { count: Type.Integer({ minimum: 1, maximum: LIMITS.maxTimestampCount }) },
  strict,
);
export const TimestampsResponseSchema = Type.Object(
  { start: TimestampSchema, count: Type.Integer({ minimum: 1 }) },
  strict,
);

export const StartTransactionsRequestSchema = Type.Object(
  {
    count: Type.Integer({ minimum: 1, maximum: LIMITS.maxTransactionCount }),
    /** Lock watches: ask for the lock-event update as of the start timestamps (PROTOCOL.md "Lock watches"). */
    lockWatch: Type.Optional(StartLockWatchSchema),
  },
  strict,
);
export const StartedTransactionSchema = Type.Object(
  { startTimestamp: TimestampSchema, token: TokenSchema },
  strict,
);
export const StartTransactionsResponseSchema = Type.Object(
  {
    immutableTimestamp: TimestampSchema,
    transactions: Type.Array(StartedTransactionSchema),
    lease: LeaseSchema,
    /** Present when the request asked for `lockWatch`: every event before the start timestamps. */
    lockWatch: Type.Optional(LockWatchUpdateSchema),
  },
  strict,
);

export const ImmutableTimestampRequestSchema = Type.Object({}, strict);
export const ImmutableTimestampResponseSchema = Type.Object(
  { immutableTimestamp: TimestampSchema },
  strict,
);

const Count = Type.Integer({ minimum: 0 });

/**
 * The `cluster` object of a cluster member's health answer, also the `details.cluster` of its
 * `?protected` 503. Every field but `shardsLed` is optional so older servers' answers still validate.
 */
export const HealthClusterSchema = Type.Object(
  {
    shardsLed: Count,
    /** Shards this server leads whose row names an in-sync standby. */
    shardsLedInSync: Type.Optional(Count),
    /** Shards whose row names this process as standby. */
    standbyFor: Type.Optional(Count),
    /** Those of `standbyFor` marked in sync. */
    standbyForInSync: Type.Optional(Count),
    /** `shardsLedInSync = shardsLed` and `standbyForInSync = standbyFor` (never with `--replicas 0`). */
    protected: Type.Optional(Type.Boolean()),
  },
  strict,
);

export const HealthResponseSchema = Type.Object(
  {
    status: Type.Literal("ok"),
    leaderId: Type.String(),
    version: Type.String(),
    /** The answering server's id (cluster addition; optional so older servers still validate). */
    serverId: Type.Optional(Type.String({ minLength: 1 })),
    /** Cluster mode only: what this server leads and stands by for (PROTOCOL.md "Cluster mode", Health). */
    cluster: Type.Optional(HealthClusterSchema),
  },
  strict,
);

/**
 * A shard's standby as a `GET /v1/cluster` entry names it, as the shard's row says. The answering
 * server adds the replication lag for the shards it leads (it alone measures it).
 */
export const ClusterLeaderStandbySchema = Type.Object(
  {
    serverId: Type.String({ minLength: 1 }),
    inSync: Type.Boolean(),
    /** Entries the standby has not acknowledged yet (only from the shard's leader). */
    lagEntries: Type.Optional(Type.Integer({ minimum: 0 })),
    /** Age of the oldest entry it has not acknowledged, in ms, 0 when none (only from the shard's leader). */
    lagMs: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  strict,
);

/**
 * One shard's leader as a server knows it (`null` while it knows of no leader, and while its last
 * read of the leadership is older than a leader lease). `epoch` grows at every change of the
 * shard's leader: of two views of a shard, the higher epoch is the newer.
 */
export const ClusterLeaderSchema = Type.Object(
  {
    shard: Type.Integer({ minimum: 0 }),
    leaderUrl: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
    leaderId: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
    epoch: Type.Integer({ minimum: 0 }),
    /** The shard's standby (`null`: none); optional so older servers' answers still validate. */
    standby: Type.Optional(Type.Union([ClusterLeaderStandbySchema, Type.Null()])),
  },
  strict,
);
/** Answer of `GET /v1/cluster`: one entry per shard, in shard order. */
export const ClusterResponseSchema = Type.Object(
  {
    serverId: Type.String({ minLength: 1 }),
    shards: Type.Integer({ minimum: 1, maximum: LIMITS.maxShards }),
    leaders: Type.Array(ClusterLeaderSchema),
  },
  strict,
);

export const ErrorBodySchema = Type.Object({ error: ErrorObjectSchema }, strict);
