import { pino } from "pino";
import type { ShardTermOptions } from "../../src/cluster/shard-term-options.js";
import type { ShardTerm } from "../../src/cluster/shard-term.js";

/**
 * The options of a {@link ShardTerm} driven step by step in a test: a silent logger, timers that
 * never fire on their own, a gate a minute ahead, leases of seconds. `options` sets the rest (the
 * term, its coordinator, its clock, when grants may start) and overrides any of these.
 */
export function termOptions(options: Pick<ShardTermOptions<ShardTerm>, "term" | "leaderId" | "serverId" | "coordinator" | "clock" | "grantsFrom"> & Partial<ShardTermOptions<ShardTerm>>): ShardTermOptions<ShardTerm> {
  return {
    logger: pino({ level: "silent" }),
    setTimer: () => () => undefined,
    wallClock: () => Date.now(),
    gateUntil: { monotonic: 60_000, wall: Date.now() + 60_000 },
    lockDelayMs: 1_000,
    leaseMs: 10_000,
    validForMs: 5_000,
    reserveBlock: 1_000,
    retryAfterMs: 100,
    onFailed: () => undefined,
    onBoundExtended: () => undefined,
    ...options,
  };
}
