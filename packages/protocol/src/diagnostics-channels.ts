import type { AcquiredLock, Lease, LockSpec } from "./types.js";

/**
 * Names of the `node:diagnostics_channel` channels the client publishes on, named as undici names
 * its own (`undici:request:create`): `leasehold:client:<subject>:<event>`. The names live here,
 * in the package both sides and every subscriber (such as `@leasehold/opentelemetry`) already
 * depend on, so a subscriber needs neither the client nor the server to know them. Messages are
 * built only when the channel has a subscriber; no message ever carries a token (a token is a
 * bearer credential): it carries a `tokenFingerprint` instead. docs/client.md "Diagnostics
 * channels" describes each.
 */
export const CLIENT_CHANNELS = {
  /** A `lock` call begins: {@link ClientLockRequestMessage}. */
  lockRequest: "leasehold:client:lock:request",
  /** A `lock` call was granted: {@link ClientLockGrantedMessage}. */
  lockGranted: "leasehold:client:lock:granted",
  /** A `lock` call ended without a grant (`{ status: "timeout" }`): {@link ClientLockEndMessage}. */
  lockTimeout: "leasehold:client:lock:timeout",
  /** A `lock` call was given up through its `AbortSignal` (`CANCELLED`): {@link ClientLockEndMessage}. */
  lockCancelled: "leasehold:client:lock:cancelled",
  /** A `lock` call rejected with another error: {@link ClientLockErrorMessage}. */
  lockError: "leasehold:client:lock:error",
  /** Held tokens were handed to `tryUnlock` or `unlock`: {@link ClientLockReleaseMessage}. */
  lockRelease: "leasehold:client:lock:release",
  /** A held token was given up by the refresher: {@link ClientLockLostMessage}. */
  lockLost: "leasehold:client:lock:lost",
  /** The asynchronous unlocker sent one `unlock` call and it ended: {@link ClientUnlockFlushMessage}. */
  unlockFlush: "leasehold:client:unlock:flush",
  /** One batched `refresh` of the client ended: {@link ClientRefreshMessage}. */
  refresh: "leasehold:client:refresh",
} as const;

/** Names of the channels the server publishes on (`leasehold:server:<subject>:<event>`). */
export const SERVER_CHANNELS = {
  /** A lock request was granted: {@link ServerLockGrantMessage}. */
  lockGrant: "leasehold:server:lock:grant",
  /** A token was released because nobody refreshed it in time: {@link ServerLeaseLapseMessage}. */
  leaseLapse: "leasehold:server:lease:lapse",
} as const;

/** `leasehold:client:lock:request`: a `lock` call begins. */
export interface ClientLockRequestMessage {
  /** The client's namespace. */
  readonly namespace: string;
  /** The call's `requestId` (the caller's, or the one the client made up): it names the call in every later message. */
  readonly requestId: string;
  /** The locks asked for, as the caller passed them (the very array: do not change it). */
  readonly locks: readonly LockSpec[];
  /** How long the call may wait, in ms (0 when the caller gave none). */
  readonly acquireTimeoutMs: number;
}

/**
 * What every message that ends a `lock` call carries. `request` is the very object published on
 * `leasehold:client:lock:request` for this call, so a subscriber can key its state by it (a
 * `WeakMap`) instead of by `requestId`, which a caller may reuse.
 */
export interface ClientLockEndMessage {
  readonly namespace: string;
  readonly requestId: string;
  /** The call's `lock:request` message. */
  readonly request: ClientLockRequestMessage;
  /** From the start of the call to its end, in ms, on the client's monotonic clock. */
  readonly waitMs: number;
}

/** `leasehold:client:lock:granted`. */
export interface ClientLockGrantedMessage extends ClientLockEndMessage {
  /** A short one-way fingerprint of the token (never the token), as in `lock:release` and `lock:lost`. */
  readonly tokenFingerprint: string;
  /** Every lock granted, with its fencing token (the answer's own array). */
  readonly acquired: readonly AcquiredLock[];
  /** The lease of the grant. */
  readonly lease: Lease;
}

/** `leasehold:client:lock:error`: the call rejected with an error other than `CANCELLED`. */
export interface ClientLockErrorMessage extends ClientLockEndMessage {
  /** The error's `code` (`UNAVAILABLE`, `INVALID_ARGUMENT`, …), or `UNKNOWN`. */
  readonly code: string;
  /** The error itself, as the caller receives it. */
  readonly error: unknown;
}

/** `leasehold:client:lock:release`: tokens handed back by the caller. */
export interface ClientLockReleaseMessage {
  readonly namespace: string;
  /** One fingerprint per token handed back (entries that were not token strings are left out). */
  readonly tokenFingerprints: readonly string[];
  /** Which call released them: `tryUnlock` (queued, sent in the background) or `unlock` (awaited). */
  readonly via: "tryUnlock" | "unlock";
}

/** `leasehold:client:lock:lost`: one held token the client gave up without being asked to. */
export interface ClientLockLostMessage {
  readonly namespace: string;
  readonly tokenFingerprint: string;
  /** The client's `LostLockReason`: `not-refreshed`, `leader-changed`, `lease-expired`, `max-tenure` or `client-closed`. */
  readonly reason: string;
}

/** `leasehold:client:unlock:flush`: one `unlock` call of the asynchronous unlocker ended. */
export interface ClientUnlockFlushMessage {
  readonly namespace: string;
  /** Tokens in the call: how many `tryUnlock` releases piled up while the previous call was out. */
  readonly batchSize: number;
  /** Duration of the call, in ms. */
  readonly durationMs: number;
  /** The error code when the call failed (its locks then lapse with their lease); absent on success. */
  readonly errorCode?: string | undefined;
}

/** `leasehold:client:refresh`: one batched refresh (the refresher's or `refresh()`'s) ended. */
export interface ClientRefreshMessage {
  readonly namespace: string;
  /** Distinct tokens sent. */
  readonly tokenCount: number;
  /** Tokens the server still held and renewed (0 when the call failed). */
  readonly refreshedCount: number;
  /** Duration, in ms. */
  readonly durationMs: number;
  /** The error code when the refresh failed; absent on success. */
  readonly errorCode?: string | undefined;
}

/** `leasehold:server:lock:grant`: the server granted a lock request. */
export interface ServerLockGrantMessage {
  readonly namespace: string;
  /** The request's `requestId`, when it had one. */
  readonly requestId?: string | undefined;
  /** A fingerprint of the token, computed as the client computes its own (so the two can be matched). */
  readonly tokenFingerprint: string;
  /** Every lock granted, with its fencing token. */
  readonly acquired: readonly AcquiredLock[];
  /** Whether the request had to wait in a queue (false: granted as it arrived). */
  readonly waited: boolean;
}

/** `leasehold:server:lease:lapse`: a token was released because nothing refreshed it for `leaseMs`. */
export interface ServerLeaseLapseMessage {
  readonly namespace: string;
  /** How many descriptors the token held (0 for a transaction's immutable-timestamp lock). */
  readonly descriptorCount: number;
  /**
   * The lapsed token's fingerprint, as in `lock:grant` (and as the client computes its own), so a
   * subscriber can tell which grant lapsed without ever seeing the token.
   */
  readonly tokenFingerprint: string;
}
