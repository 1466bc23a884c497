import { randomBytes } from "node:crypto";
import { nowNs } from "../stats.js";
import type { PeerSession } from "./peer.js";
import { RespConnection } from "./resp-connection.js";
import { RespError, type RespValue } from "./resp.js";

/** Lock lease in Redis (`PX`): far longer than any pair, so no lock lapses mid-pair. */
const TTL_MS = 10_000;

/**
 * `WAIT 1`'s timeout: a grant whose write no replica acknowledged within it is not counted (it is
 * released and taken again). 1 s: far beyond a loopback acknowledgement, short enough that a
 * replica gone astray shows as a failed round rather than a hung one.
 */
const WAIT_TIMEOUT_MS = 1_000;

/** The usual compare-and-delete: delete the key only while it still holds this lock's token. */
export const UNLOCK_SCRIPT = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

/** How a pair releases: written and left to answer later (`try`, like leasehold's `tryUnlock`), or awaited. */
export type RedisRelease = "try" | "await";

/** A session's pairs, plus how many grants did not count because no replica acknowledged them in time. */
export interface RedisReplicaSession extends PeerSession {
  /** Grants whose `WAIT 1` answered 0 (released and retried, not counted as pairs). */
  readonly unreplicated: () => number;
}

/** A grant only when `SET` answered OK and `WAIT` counted the replica; anything else but a held key throws. */
function granted(set: RespValue, wait: RespValue, key: string): boolean {
  if (set instanceof RespError || wait instanceof RespError) throw new Error(`Redis: lock ${key}: ${String(set instanceof RespError ? set.message : (wait as RespError).message)}`);
  if (set !== "OK") throw new Error(`Redis: lock ${key} was held (SET NX answered ${JSON.stringify(set)}); every caller locks keys of its own`);
  return typeof wait === "number" && wait >= 1;
}

/**
 * Load {@link UNLOCK_SCRIPT} into the primary on `port`; answers its SHA1 for `EVALSHA`. Redis
 * replicates a script's effects (the `DEL`), so the replica needs no copy of it.
 */
export async function loadUnlockScript(port: number): Promise<string> {
  const conn = await RespConnection.open(port);
  try {
    const sha = await conn.call("SCRIPT", "LOAD", UNLOCK_SCRIPT);
    if (typeof sha !== "string") throw new Error(`Redis: SCRIPT LOAD answered ${String(sha)}`);
    return sha;
  } finally {
    conn.close();
  }
}

/**
 * A round's callers on a Redis primary with one replica, one connection per caller (opened at its
 * first pair). A lock is `SET key token NX PX 10000` and `WAIT 1 1000` written in one write: the
 * grant counts only when `SET` answered OK and `WAIT` answered at least 1, i.e. the replica had the
 * key when the caller learned it holds the lock (what leasehold's standby promises: an answer that
 * reveals a grant waits for the standby). The unlock is the compare-and-delete script by `EVALSHA`,
 * without a `WAIT` of its own: an unlock the replica never saw leaves the key held there until its
 * `PX` runs out, which delays the next holder after a failover but never makes two, and the next
 * lock written on the same connection waits for it anyway (`WAIT` counts the replica's
 * acknowledgement of everything the connection wrote before it). `prefix` keeps rounds' keys apart.
 */
export function redisReplicaSession(port: number, unlockSha: string, release: RedisRelease, prefix: string): RedisReplicaSession {
  const connections = new Map<number, Promise<RespConnection>>();
  const unlocks = new Set<Promise<void>>();
  const tokenPrefix = randomBytes(6).toString("hex");
  let sequence = 0;
  let unreplicated = 0;
  let unlockFailures = 0;
  const connectionOf = (caller: number): Promise<RespConnection> => {
    let conn = connections.get(caller);
    if (conn === undefined) connections.set(caller, (conn = RespConnection.open(port)));
    return conn;
  };
  const unlock = (conn: RespConnection, key: string, token: string): Promise<void> =>
    conn.call("EVALSHA", unlockSha, 1, key, token).then(
      (answer) => void (answer === 1 || unlockFailures++),
      () => void unlockFailures++,
    );
  return {
    unreplicated: () => unreplicated,
    async pair(key, caller) {
      const conn = await connectionOf(caller);
      const name = `${prefix}:k${key}`;
      for (;;) {
        const token = `${tokenPrefix}:${sequence++}`;
        const [set, wait] = await conn.send([
          ["SET", name, token, "NX", "PX", TTL_MS],
          ["WAIT", 1, WAIT_TIMEOUT_MS],
        ]);
        if (granted(set!, wait!, name)) {
          const at = nowNs();
          const done = unlock(conn, name, token);
          if (release === "await") await done;
          else {
            unlocks.add(done);
            void done.then(() => unlocks.delete(done));
          }
          return at;
        }
        unreplicated++;
        await unlock(conn, name, token);
      }
    },
    async end() {
      await Promise.all(unlocks);
      for (const conn of connections.values()) (await conn).close();
      if (unlockFailures > 0) throw new Error(`Redis: ${unlockFailures} unlocks did not delete their key`);
    },
  };
}
