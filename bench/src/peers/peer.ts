/** The peers measured by `pnpm bench peers`, in the order they are reported. */
export const PEER_NAMES = ["leasehold_async", "leasehold_sync", "leasehold_unbatched", "redlock", "etcd", "pg_advisory", "pg_row"] as const;

/** One peer's name as it appears in figure names. */
export type PeerName = (typeof PEER_NAMES)[number];

/** A round's worth of callers on one peer: a lock+unlock pair on a numbered key. */
export interface PeerSession {
  /**
   * Acquire key `key` exclusively (waiting as long as it takes), then release it. Resolves when
   * the peer's release call has returned, or, for `tryUnlock`, when it has been handed off, with
   * the moment the lock was granted (`nowNs()` as soon as the acquiring call returned), so the
   * wait for each acquisition can be told apart from the release. `caller` is the index of the
   * caller making the pair (0 for a lone caller): a peer that gives each caller a connection of its
   * own picks it by this; the others ignore it.
   */
  pair(key: number, caller: number): Promise<number>;
  /** Finish the round (for leasehold: close the client, which sends the last pending unlocks). */
  end(): Promise<void>;
}

/** A locking system under test, reachable for the whole suite. */
export interface PeerDriver {
  readonly name: PeerName;
  /** Open the callers' side for one round (a fresh client, or the shared pool). */
  session(): Promise<PeerSession>;
}

/** Why a peer cannot be measured in this run. */
export interface PeerSkip {
  readonly name: PeerName;
  readonly reason: string;
}
