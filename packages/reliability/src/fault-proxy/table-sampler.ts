import type { EmbeddedLockService } from "@leasehold/server";
import type { ServerTap } from "./server-tap.js";
import type { Violations } from "../violations.js";

/** Options of {@link startTableSampler}. */
export interface TableSamplerOptions {
  /** The server's service (in this process), read directly: the unproxied view. */
  readonly service: EmbeddedLockService;
  /** The tap recording what that service answered. */
  readonly tap: ServerTap;
  /** Namespaces to look at. */
  readonly namespaces: readonly string[];
  /** The server's `leaseMs`. */
  readonly leaseMs: number;
  /** How often to look, in ms. */
  readonly intervalMs: number;
  /** Where broken checks are counted. */
  readonly violations: Violations;
}

/** What the sampler saw. */
export interface TableSampler {
  /** Samples taken so far. */
  readonly samples: () => number;
  /** Holders seen per sample, at most. */
  readonly maxHolders: () => number;
  /** Holder sightings whose grant the tap had not recorded yet (granted during the probe). */
  readonly unattributed: () => number;
  /** Take one more sample now, then stop. Idempotent. */
  stop(): void;
}

/**
 * The engine keeps lease times in whole milliseconds and rounds an expiry up, never early
 * (engine/lease-queue.ts), so a holder may outlive `renewal + leaseMs` by under a millisecond.
 * (Seen once: still held 0.1 ms after the un-rounded end.) The promise to clients, `validForMs`, is
 * half the lease and unaffected.
 */
const ENGINE_TIME_RESOLUTION_MS = 1;

/**
 * Look at the lock table from inside the server at a fixed interval and check, each time:
 * - `exclusive-snapshot`: a descriptor held exclusively has exactly one holder, and no descriptor
 *   has holders in two modes;
 * - `holder-past-lease`: no holder outlived its lease. The sample first makes the engine catch up
 *   (a refresh of a token that does not exist, sent through the untapped method: it reaps every
 *   lease due by then and changes nothing else), then reads `snapshot()` in the same tick. A holder
 *   whose latest renewal the tap recorded as finished by `t`, with `t + leaseMs` (plus the
 *   engine's 1 ms time resolution) before the probe began, must have been reaped;
 * - `holder-after-unlock`: no holder is still there after an unlock call that released it finished.
 */
export function startTableSampler(options: TableSamplerOptions): TableSampler {
  const { service, tap, namespaces, leaseMs, violations } = options;
  let samples = 0;
  let maxHolders = 0;
  let unattributed = 0;
  const first = namespaces[0];
  if (first === undefined) throw new RangeError("startTableSampler: no namespace");

  function sample(): void {
    const probeAt = performance.now();
    // Synchronous inside: the engine catches up before the returned promise exists.
    tap.originalRefresh(first as string, { tokens: ["table-sampler-probe"] }).catch(() => undefined);
    samples++;
    let holders = 0;
    for (const ns of namespaces) {
      for (const d of service.snapshot(ns).descriptors) {
        holders += d.holders.length;
        const modes = new Set(d.holders.map((h) => h.mode));
        if (modes.size > 1 || (modes.has("exclusive") && d.holders.length > 1)) {
          violations.add("exclusive-snapshot", `${ns}/${d.descriptor}: holders ${JSON.stringify(d.holders)}`);
        }
        for (const h of d.holders) {
          const rec = tap.byFence(ns, h.fencingToken);
          if (rec === undefined) {
            unattributed++;
            continue;
          }
          if (rec.maxRenewAfter + leaseMs + ENGINE_TIME_RESOLUTION_MS < probeAt) {
            violations.add(
              "holder-past-lease",
              `${ns}/${d.descriptor} fencing ${h.fencingToken}: last renewal done by ${rec.maxRenewAfter.toFixed(1)} ms, lease ${leaseMs} ms, still held at ${probeAt.toFixed(1)} ms`,
            );
          }
          if (rec.unlockAfter !== undefined && rec.unlockAfter < probeAt) {
            violations.add("holder-after-unlock", `${ns}/${d.descriptor} fencing ${h.fencingToken}: released by ${rec.unlockAfter.toFixed(1)} ms, held at ${probeAt.toFixed(1)} ms`);
          }
        }
      }
    }
    maxHolders = Math.max(maxHolders, holders);
  }

  const timer = setInterval(sample, options.intervalMs);
  let stopped = false;
  return {
    samples: () => samples,
    maxHolders: () => maxHolders,
    unattributed: () => unattributed,
    stop: () => {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      sample();
    },
  };
}
