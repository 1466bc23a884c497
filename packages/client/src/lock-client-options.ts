import type { Logger } from "./logger.js";
import type { HttpLockServiceOptions } from "./http-lock-service-options.js";

/** Options every {@link LockClient} takes, whatever its transport. */
export interface LockClientOptions {
  /** The namespace every call of this client goes to (its own locks, timestamps and fencing). */
  readonly namespace: string;
  /**
   * Where warnings go (failed unlocks and refreshes, lost locks, leaked locks), as pino JSON.
   * Token text is never logged. Default: a pino logger at level `warn` on stderr.
   */
  readonly logger?: Logger | undefined;
  /**
   * Longest a lock is kept alive by the refresher, in ms. Default 15 minutes: a guard against
   * leaked locks (a token nobody will ever unlock would otherwise be refreshed for ever); such a
   * token is dropped with a warning, reported on `lostLocks`, and lapses.
   */
  readonly maxTenureMs?: number | undefined;
  /**
   * Longest time between refreshes of a held lock, in ms. Default: half of the lease's
   * `validForMs`, as the server answers it (a smaller value here wins): a refresh then has half a
   * lease to land.
   */
  readonly refreshIntervalMs?: number | undefined;
  /**
   * How often the refresher wakes up to see what is due (only while something is held), in ms.
   * Default 100: it bounds how late a due refresh is sent and a lapsed lease is reported.
   */
  readonly refreshTickMs?: number | undefined;
  /**
   * Monotonic clock in ms, for leases. Default `performance.now`: wall-clock jumps must not
   * stretch a lease. Tests may inject a fake one.
   */
  readonly now?: (() => number) | undefined;
  /**
   * Coalesce concurrent `lock` calls into `lock-batch` calls (docs/client.md "Lock batching"):
   * while batches are in transit, new lock requests queue and leave together; each caller's
   * promise settles from its own line. Every per-request guarantee of `lock` is kept. A server
   * without lock batches (404) is detected and the client falls back to one `lock` per call; an
   * embedded service without `lockBatch` is called once per lock. Default `true` for
   * `LockClient.http`: one HTTP request per lock caps a client near the server's request rate, and
   * batches multiply it (docs/benchmarks.md, peers). Default `false` for `LockClient.embedded`:
   * there is no round-trip to amortise, so a batch only adds a step.
   */
  readonly lockBatching?: boolean | undefined;
}

/** Options of `LockClient.http`: the client's and the transport's. */
export interface HttpLockClientOptions extends LockClientOptions, HttpLockServiceOptions {}
