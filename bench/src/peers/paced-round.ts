import { nowMs } from "../stats.js";
import type { PeerSession } from "./peer.js";
import { WORKLOADS } from "./workloads.js";

/**
 * When caller `caller` of `callers` should start its `n`th pair, in ms after the round's start, for
 * `rate` pairs/s in all: each caller paces itself to `rate / callers` pairs/s, and the callers are
 * spread evenly over one period so their pairs do not leave in bursts of `callers` at once.
 */
export function pacedSlotMs(caller: number, n: number, callers: number, rate: number): number {
  const periodMs = (1_000 * callers) / rate;
  return (caller * periodMs) / callers + n * periodMs;
}

/** What a paced round did. */
export interface PacedRoundResult {
  readonly pairs: number;
  readonly seconds: number;
  /** Slots skipped because the caller was more than one period behind (the peer could not keep the rate). */
  readonly skipped: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * The c64 workload's callers (64, each cycling over 4 keys of its own) paced to `rate` pairs/s in
 * all for `ms`, on `session`: each caller starts a pair at its slot ({@link pacedSlotMs}), waits
 * for it, and sleeps until its next slot. A caller more than one period behind skips the slots it
 * missed instead of catching up in a burst, so a peer that cannot keep the rate is measured at the
 * rate it keeps (`skipped` says so). For a server's CPU per pair at a load every setup can carry:
 * at full speed a setup's CPU per pair includes what it spends waiting busily and batching
 * differently, which differs with how fast it runs.
 */
export async function pacedRound(session: PeerSession, rate: number, ms: number): Promise<PacedRoundResult> {
  const { callers, keyOf } = WORKLOADS.c64;
  const periodMs = (1_000 * callers) / rate;
  const start = nowMs();
  let pairs = 0;
  let skipped = 0;
  await Promise.all(
    Array.from({ length: callers }, async (_, caller) => {
      let n = 0;
      for (;;) {
        let slot = pacedSlotMs(caller, n, callers, rate);
        const late = nowMs() - start - slot;
        if (late > periodMs) {
          const missed = Math.floor(late / periodMs);
          n += missed;
          skipped += missed;
          slot = pacedSlotMs(caller, n, callers, rate);
        }
        if (slot >= ms) return;
        const wait = start + slot - nowMs();
        if (wait > 0) await sleep(wait);
        await session.pair(keyOf(caller, n), caller);
        pairs++;
        n++;
      }
    }),
  );
  return { pairs, seconds: (nowMs() - start) / 1_000, skipped };
}
