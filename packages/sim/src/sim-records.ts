import type { LockMode, LockWatchSince, LockWatchUpdate } from "@leasehold/protocol";

/**
 * Something a simulated client was told it holds under a token with a lease (a lock, or a
 * transaction's immutable-timestamp lock), and what it learned of it afterwards.
 */
export interface Leased {
  readonly client: string;
  readonly namespace: string;
  readonly token: string;
  readonly leaderId: string;
  /** True time the request (or the first send of its `requestId`) left the client. */
  readonly sentAt: number;
  /** True time the grant reached the client. */
  readonly receivedAt: number;
  /**
   * Until when the client was promised it: the first send plus `validForMs`, moved on by every
   * refresh that answered the token (its send time plus its `validForMs`).
   */
  guaranteeEnd: number;
  /**
   * True time the client sent the unlock (it stops using it then), `Infinity` while held. A
   * client that crashed never sends one: its hold ends with its guarantee.
   */
  releasedAt: number;
  /** True time a refresh sent inside the guarantee answered without the token, `null` when never. */
  lostAt: number | null;
}

/** One lock a simulated client was told it holds. */
export interface Hold extends Leased {
  readonly descriptor: string;
  readonly mode: LockMode;
  readonly fencingToken: number;
  /** The permit limit the request named (`permit` mode only). */
  readonly limit?: number | undefined;
}

/** One transaction a client started: its immutable-timestamp lock holds `start`. */
export interface Txn extends Leased {
  readonly start: number;
}

/** A range of timestamps a client was given. */
export interface Stamps {
  readonly namespace: string;
  readonly start: number;
  readonly count: number;
  readonly sentAt: number;
  readonly receivedAt: number;
}

/** An immutable timestamp a client was given (alone, or with started transactions). */
export interface Immutable {
  readonly client: string;
  readonly namespace: string;
  readonly value: number;
  readonly sentAt: number;
  readonly receivedAt: number;
  /** The start timestamps given in the same answer (`transactions/start`), empty otherwise. */
  readonly starts: readonly number[];
}

/**
 * A request that may wait on the server (a lock or a wait-for-locks with its `acquireTimeoutMs`),
 * and its outcome as the client saw it.
 */
export interface Waiter {
  readonly client: string;
  readonly namespace: string;
  readonly what: string;
  readonly sentAt: number;
  readonly acquireTimeoutMs: number;
  /** True time its answer (`acquired`, `free` or `timeout`) reached the client, `null` when none came by its deadline. */
  answeredAt: number | null;
  /** The answer's status, `null` when none came. */
  status: string | null;
  /** True time the client gave up on it (its deadline passed with no answer), `null` when it did not. */
  gaveUpAt: number | null;
}

/** A wait-for-locks answered `free`. */
export interface Freed {
  readonly client: string;
  readonly namespace: string;
  readonly descriptor: string;
  readonly mode: LockMode;
  readonly sentAt: number;
  readonly receivedAt: number;
}

/** A `leaderId` (or lock-event `logId`) a client was answered, when, and with what. */
export interface IdSeen {
  readonly namespace: string;
  readonly id: string;
  readonly sentAt: number;
  readonly receivedAt: number;
  /** What answered it, for the violation's text. */
  readonly what: string;
}

/** One answer of `lock-events` (or a `transactions/start` with `lockWatch`) a watcher got. */
export interface WatchAnswer {
  readonly client: string;
  readonly namespace: string;
  readonly since: LockWatchSince | null;
  readonly update: LockWatchUpdate;
  readonly sentAt: number;
  readonly receivedAt: number;
}

/** A lock request a client sent (whatever came of it): lock-watch events are matched against them. */
export interface Asked {
  readonly namespace: string;
  readonly descriptor: string;
  readonly mode: LockMode;
  readonly sentAt: number;
}

/** One broken promise, by the invariant it breaks. */
export interface Violation {
  readonly invariant:
    | "exclusion"
    | "permit-limit"
    | "fencing-order"
    | "timestamp-order"
    | "durability"
    | "liveness"
    | "waiter-liveness"
    | "wait-for-locks"
    | "immutable-timestamp"
    | "leader-id"
    | "lock-watch"
    | "queue-order"
    | "bound-fence"
    | "protected-claim"
    | "replica-divergence"
    | "balance-target";
  readonly detail: string;
}

/** `list` grouped by `key`. */
export function groupBy<T>(list: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const by = new Map<string, T[]>();
  for (const item of list) {
    const k = key(item);
    let group = by.get(k);
    if (group === undefined) by.set(k, (group = []));
    group.push(item);
  }
  return by;
}

/** When `l` stopped counting as held: its unlock, or the end of its guarantee, whichever came first. */
export function heldUntil(l: Leased): number {
  return Math.min(l.releasedAt, l.guaranteeEnd);
}
