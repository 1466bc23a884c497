import { LeaseholdError, type LockService, type LockWatchSince, type LockWatchUpdate } from "@leasehold/protocol";
import { Observable } from "rxjs";

/** Options of `LockClient.watchLocks`. */
export interface WatchLocksOptions {
  /**
   * How often the prefixes are registered again, in ms. Default 20,000: a third of the server's
   * default watch TTL (60 s, `--watch-ttl-ms`), so two registrations may fail before the watch
   * lapses. Set it below a third of the server's TTL if the server runs a shorter one.
   */
  readonly reRegisterEveryMs?: number | undefined;
  /**
   * `waitMs` of each long poll (0..30,000). Default 5,000: an answer arrives at once when something
   * happened, and a quiet poll ends well inside the transport's default 10 s request timeout. With
   * 0 the watcher polls every 50 ms instead.
   */
  readonly pollWaitMs?: number | undefined;
  /** Monotonic clock in ms. Default `performance.now()`. */
  readonly now?: (() => number) | undefined;
}

/**
 * Follow a namespace's lock-event log (PROTOCOL.md "Lock watches") as an Observable of updates,
 * for as long as someone subscribes. It registers `prefixes` and re-registers them before the
 * server's TTL, long-polls `lock-events` from its last version, and emits every snapshot and every
 * non-empty events update in order. A gap becomes a snapshot: the server answers one when the
 * follower fell behind what it keeps, the log restarted (`logId`) or the watched set changed, and
 * the watcher itself asks for one (`since: null`) if an answer ever skips a version. A snapshot
 * that does not show its prefixes watched (they lapsed, or a new leader started a new log) makes
 * it register them again at once. Failed calls are retried with backoff from the same position;
 * the Observable errors only when the server cannot watch at all (`NOT_FOUND`: no such route) or
 * refuses the prefixes (`INVALID_ARGUMENT`, e.g. over 1,000 in the namespace). Unsubscribing stops
 * the poll at once.
 */
export function watchLocks(service: LockService, namespace: string, prefixes: readonly string[], options: WatchLocksOptions = {}): Observable<LockWatchUpdate> {
  const everyMs = options.reRegisterEveryMs ?? 20_000;
  const waitMs = options.pollWaitMs ?? 5_000;
  const now = options.now ?? (() => performance.now());
  const wanted = [...new Set(prefixes)];
  return new Observable<LockWatchUpdate>((subscriber) => {
    const register = service.lockWatches?.bind(service);
    const events = service.lockEvents?.bind(service);
    if (register === undefined || events === undefined) {
      subscriber.error(new LeaseholdError("NOT_FOUND", "this LockService has no lock watches (lockWatches and lockEvents)"));
      return undefined;
    }
    const controller = new AbortController();
    const signal = controller.signal;
    let since: LockWatchSince | null = null;
    let registerAt = 0;
    void (async () => {
      let failures = 0;
      while (!signal.aborted) {
        try {
          if (now() >= registerAt) {
            const at = now();
            await register(namespace, { prefixes: wanted }, { signal });
            registerAt = at + everyMs;
          }
          const update = await events(namespace, { since, waitMs }, { signal });
          failures = 0;
          if (signal.aborted) return;
          if (update.type === "events" && since !== null && update.logId === since.logId && update.events.length > 0 && update.events[0]!.version !== since.version + 1) {
            since = null; // a skipped version: start over from a snapshot
            continue;
          }
          if (update.type === "snapshot" && !covered(wanted, update.prefixes)) registerAt = 0;
          since = { logId: update.logId, version: update.version };
          if (update.type === "snapshot" || update.events.length > 0) subscriber.next(update);
          // Without a long poll an empty answer comes back at once: pace the loop instead of spinning.
          else if (waitMs === 0) await pause(50, signal);
        } catch (err) {
          if (signal.aborted) return;
          if (err instanceof LeaseholdError && (err.code === "NOT_FOUND" || err.code === "INVALID_ARGUMENT")) {
            subscriber.error(err);
            return;
          }
          failures++;
          await pause(Math.min(5_000, 100 * 2 ** Math.min(failures, 6)), signal);
        }
      }
    })();
    return () => controller.abort();
  });
}

/** True when every wanted prefix falls under a watched one. */
function covered(wanted: readonly string[], watched: readonly string[]): boolean {
  return wanted.every((p) => watched.some((w) => p.startsWith(w)));
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });
}
