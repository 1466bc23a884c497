import type { Logger } from "pino";
import type { ShardTerm } from "./shard-term.js";

/**
 * Test mode (`--log-level debug`): log the wall-clock interval `term` served so far (first and
 * last operation), so a checker can verify that one shard's epochs never served at once. Wall-clock
 * milliseconds (`performance.timeOrigin` + monotonic time), comparable across servers of one
 * machine. Nothing at other levels, or before the term served anything.
 */
export function logServeInterval(term: ShardTerm, logger: Logger): void {
  if (!logger.isLevelEnabled("debug") || term.firstServedAt < 0) return;
  const origin = performance.timeOrigin;
  logger.debug(
    { shard: term.shard, epoch: term.epoch, leaderId: term.leaderId, from: origin + term.firstServedAt, to: origin + term.lastServedAt, ended: term.isEnded },
    "serve interval",
  );
}
