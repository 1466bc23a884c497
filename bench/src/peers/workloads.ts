import { nowMs, nowNs } from "../stats.js";
import type { PeerSession } from "./peer.js";

/** The three workloads of issue 6's peer benchmarks. */
export type PeerWorkload = "c64" | "contended" | "c1";

/** Callers and keys of each workload. */
export const WORKLOADS = {
  /** 64 callers, each cycling over 4 keys of its own: nothing is ever contended. */
  c64: { callers: 64, keyOf: (caller: number, n: number) => caller * 4 + (n % 4) },
  /** 64 callers on 8 shared keys, each caller going round all 8 from its own starting point. */
  contended: { callers: 64, keyOf: (caller: number, n: number) => 1_000 + ((caller + n) % 8) },
  /** One caller cycling over 4 keys of its own; every pair is timed. */
  c1: { callers: 1, keyOf: (_caller: number, n: number) => n % 4 },
} as const satisfies Record<PeerWorkload, { callers: number; keyOf(caller: number, n: number): number }>;

/** Every key any workload uses (the row-lock peer needs a row for each). */
export function allKeys(): number[] {
  const keys = new Set<number>();
  for (const w of Object.values(WORKLOADS)) for (let c = 0; c < w.callers; c++) for (let n = 0; n < 8; n++) keys.add(w.keyOf(c, n));
  return [...keys].sort((a, b) => a - b);
}

/** What one timed round produced. */
export interface RoundResult {
  readonly pairs: number;
  readonly seconds: number;
  /** Each pair's duration in µs (only when asked for). */
  readonly pairUs: number[];
  /** Each acquisition's wait in µs, from the acquiring call to the grant (only when asked for). */
  readonly waitUs: number[];
  /** Pairs completed by each caller, by caller index: how evenly the grants went round. */
  readonly perCaller: number[];
}

/** What to time in a round besides counting pairs. */
export interface RoundTiming {
  /** Time each whole pair (lock to release). */
  readonly pairs: boolean;
  /** Time each acquisition's wait (lock call to grant). */
  readonly waits: boolean;
}

/** Run `workload`'s callers on `session` for `ms`, counting pairs per caller and timing what `timing` asks. */
export async function runRound(session: PeerSession, workload: PeerWorkload, ms: number, timing: RoundTiming): Promise<RoundResult> {
  const { callers, keyOf } = WORKLOADS[workload];
  const pairUs: number[] = [];
  const waitUs: number[] = [];
  const perCaller = new Array<number>(callers).fill(0);
  const timed = timing.pairs || timing.waits;
  let pairs = 0;
  const start = nowMs();
  const end = start + ms;
  await Promise.all(
    Array.from({ length: callers }, async (_, caller) => {
      for (let n = 0; nowMs() < end; n++) {
        const t0 = timed ? nowNs() : 0;
        const granted = await session.pair(keyOf(caller, n), caller);
        if (timing.pairs) pairUs.push((nowNs() - t0) / 1_000);
        if (timing.waits) waitUs.push((granted - t0) / 1_000);
        perCaller[caller]!++;
        pairs++;
      }
    }),
  );
  return { pairs, seconds: (nowMs() - start) / 1_000, pairUs, waitUs, perCaller };
}

/**
 * The busiest caller's pairs over the least busy one's in one round: 1 when every caller got the
 * same share, large when some starved. A caller that completed no pair at all counts as one pair,
 * so the ratio stays a finite number (the busiest caller's count) that still shows the starvation.
 */
export function busiestOverLeastBusy(perCaller: readonly number[]): number {
  if (perCaller.length === 0) return Number.NaN;
  return Math.max(...perCaller) / Math.max(1, Math.min(...perCaller));
}
