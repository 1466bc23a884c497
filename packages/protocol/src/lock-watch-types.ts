import type { Static, TSchema } from "@sinclair/typebox";
import type * as W from "./lock-watch-schemas.js";
import type { OptionalUndefined } from "./optional-undefined.js";

type Wire<T extends TSchema> = OptionalUndefined<Static<T>>;

/** Body of `lock-watches`. */
export type LockWatchesRequest = Wire<typeof W.LockWatchesRequestSchema>;
/** Answer of `lock-watches`: every prefix now watched in the namespace. */
export type LockWatchesResponse = Wire<typeof W.LockWatchesResponseSchema>;
/** A follower's position in a namespace's lock-event log. */
export type LockWatchSince = Wire<typeof W.LockWatchSinceSchema>;
/** Body of `lock-events`. */
export type LockEventsRequest = Wire<typeof W.LockEventsRequestSchema>;
/** A descriptor with the mode it is (or was) locked in. */
export type WatchedLock = Wire<typeof W.WatchedLockSchema>;
/** One event of the log. */
export type LockEvent = Wire<typeof W.LockEventSchema>;
/** An update with the events after the follower's version. */
export type LockEventsUpdate = Wire<typeof W.LockEventsUpdateSchema>;
/** An update that replaces the follower's picture: what is locked now. */
export type LockSnapshotUpdate = Wire<typeof W.LockSnapshotUpdateSchema>;
/** Answer of `lock-events` and `lockWatch` of `transactions/start`: events or a snapshot. */
export type LockWatchUpdate = Wire<typeof W.LockWatchUpdateSchema>;
