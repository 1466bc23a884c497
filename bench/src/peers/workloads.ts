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
}

/** Run `workload`'s callers on `session` for `ms`, counting pairs and, if `timePairs`, timing each. */
export async function runRound(session: PeerSession, workload: PeerWorkload, ms: number, timePairs: boolean): Promise<RoundResult> {
  const { callers, keyOf } = WORKLOADS[workload];
  const pairUs: number[] = [];
  let pairs = 0;
  const start = nowMs();
  const end = start + ms;
  await Promise.all(
    Array.from({ length: callers }, async (_, caller) => {
      for (let n = 0; nowMs() < end; n++) {
        const t0 = timePairs ? nowNs() : 0;
        await session.pair(keyOf(caller, n));
        if (timePairs) pairUs.push((nowNs() - t0) / 1_000);
        pairs++;
      }
    }),
  );
  return { pairs, seconds: (nowMs() - start) / 1_000, pairUs };
}
