import { Type } from "@sinclair/typebox";
import { LIMITS } from "./limits.js";

/*
 * Lock watches (PROTOCOL.md "Lock watches", TimeLock's lock watch service). Kept apart from
 * schemas.ts, which imports the pieces `transactions/start` needs from here; so this file declares
 * its own descriptor and mode schemas (the same constraints) rather than import them back.
 */
const strict = { additionalProperties: false } as const;

/** A watched prefix: 0..1024 UTF-8 bytes (`""` watches everything; the byte check is in validation.ts). */
export const WatchPrefixSchema = Type.String({ maxLength: LIMITS.maxDescriptorBytes });
const WatchedDescriptorSchema = Type.String({ minLength: 1, maxLength: LIMITS.maxDescriptorBytes });
const WatchedModeSchema = Type.Union([Type.Literal("exclusive"), Type.Literal("shared"), Type.Literal("permit")]);

/** Body of `lock-watches`: the prefixes to watch (or keep watching) in the namespace. */
export const LockWatchesRequestSchema = Type.Object(
  { prefixes: Type.Array(WatchPrefixSchema, { minItems: 1, maxItems: LIMITS.maxWatchPrefixesPerRequest }) },
  strict,
);
/** Answer of `lock-watches`: every prefix now watched in the namespace, ascending. */
export const LockWatchesResponseSchema = Type.Object({ prefixes: Type.Array(Type.String()) }, strict);

/** Where a follower of the event log stands: the log it followed and the last version it has. */
export const LockWatchSinceSchema = Type.Object(
  { logId: Type.String({ minLength: 1, maxLength: 256 }), version: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }) },
  strict,
);
/** `since` of `lock-events` and of `transactions/start`'s `lockWatch`: a position, or `null` for a snapshot. */
export const LockWatchSinceOrNullSchema = Type.Union([LockWatchSinceSchema, Type.Null()]);

/** Body of `lock-events`. */
export const LockEventsRequestSchema = Type.Object(
  {
    since: LockWatchSinceOrNullSchema,
    waitMs: Type.Optional(Type.Integer({ minimum: 0, maximum: LIMITS.maxLockEventsWaitMs })),
  },
  strict,
);

/** `lockWatch` of a `transactions/start` body. */
export const StartLockWatchSchema = Type.Object({ since: LockWatchSinceOrNullSchema }, strict);

/** A descriptor and the mode it was locked in, as events and snapshots list them. */
export const WatchedLockSchema = Type.Object({ descriptor: WatchedDescriptorSchema, mode: WatchedModeSchema }, strict);

/** One entry of the event log: a grant (`lock`) or a release (`unlock`) of watched descriptors. */
export const LockEventSchema = Type.Object(
  {
    version: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
    kind: Type.Union([Type.Literal("lock"), Type.Literal("unlock")]),
    descriptors: Type.Array(WatchedLockSchema, { minItems: 1 }),
  },
  strict,
);

/** An update holding every event after the follower's version, up to `version`. */
export const LockEventsUpdateSchema = Type.Object(
  {
    type: Type.Literal("events"),
    logId: Type.String({ minLength: 1 }),
    version: Type.Integer({ minimum: 0 }),
    events: Type.Array(LockEventSchema),
  },
  strict,
);
/** An update that replaces what the follower knew: every watched lock held as of `version`. */
export const LockSnapshotUpdateSchema = Type.Object(
  {
    type: Type.Literal("snapshot"),
    logId: Type.String({ minLength: 1 }),
    version: Type.Integer({ minimum: 0 }),
    locked: Type.Array(WatchedLockSchema),
    prefixes: Type.Array(Type.String()),
  },
  strict,
);
/** Answer of `lock-events`, and `lockWatch` of a `transactions/start` answer. */
export const LockWatchUpdateSchema = Type.Union([LockEventsUpdateSchema, LockSnapshotUpdateSchema]);
