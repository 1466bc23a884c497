import { LockClient } from "@leasehold/client";
import { silentLogger } from "../silent-logger.js";
import { nowNs } from "../stats.js";
import type { PeerDriver, PeerName, PeerSession } from "./peer.js";

/** How a leasehold peer releases: `tryUnlock` (handed off, batched) or awaited `unlock`. */
export type LeaseholdRelease = "try" | "await";

/** The part of `LockClient`'s static side a peer uses: another build's class fits it too. */
export type LockClientClass = Pick<typeof LockClient, "http">;

/**
 * leasehold over loopback HTTP to the CLI server: one `LockClient` per round shared by all
 * callers, `lock` waiting up to 30 s, then `tryUnlock` or an awaited `unlock`. `lockBatching`
 * is the client option of that name: concurrent `lock` calls coalesce into `lock-batch` calls.
 * `clientClass` is the `LockClient` to use; default this build's. `pnpm bench:peer-trials` passes
 * another build's (`LEASEHOLD_BASELINE_CLIENT`) for an A/B of a client change.
 */
export function leaseholdPeer(name: PeerName, baseUrl: string, release: LeaseholdRelease, lockBatching: boolean, clientClass: LockClientClass = LockClient): PeerDriver {
  let round = 0;
  return {
    name,
    async session(): Promise<PeerSession> {
      // A namespace per round: nothing left from an earlier round can be in the way.
      const client = clientClass.http({ baseUrl, namespace: `peers-${name}-${round++}`, logger: silentLogger(), lockBatching });
      return {
        async pair(key) {
          const res = await client.lock([{ descriptor: `k${key}`, mode: "exclusive" }], { acquireTimeoutMs: 30_000 });
          const granted = nowNs();
          if (res.status !== "acquired") throw new Error(`${name}: lock k${key} not granted within 30 s`);
          if (release === "try") client.tryUnlock([res.token]);
          else await client.unlock([res.token]);
          return granted;
        },
        async end() {
          await client.close();
          const failures = client.stats().unlockFailures;
          if (failures > 0) throw new Error(`${name}: ${failures} unlock calls failed`);
        },
      };
    },
  };
}
