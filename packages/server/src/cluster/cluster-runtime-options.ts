import type { Logger } from "pino";
import type { ClusterMetrics } from "./cluster-metrics.js";
import type { Coordinator } from "./coordinator.js";
import type { ProbeResult } from "./health-prober.js";
import type { ProcessClock } from "./process-clock.js";
import type { TestBreak } from "./test-breaks.js";

/** What the runtime is made with (see `ClusterOptions` for the defaults and their reasons). */
export interface ClusterRuntimeOptions {
  readonly coordinator: Coordinator;
  /** `--shards`: the count of a new cluster; undefined adopts the existing cluster's (or 64). */
  readonly shards?: number | undefined;
  readonly serverId: string;
  readonly url: string;
  readonly leaderLeaseMs: number;
  readonly leaseMs: number;
  readonly validForMs?: number | undefined;
  readonly maxWaitingPerNamespace?: number | undefined;
  /** How long a lock watch lasts unless re-registered (see `LockServiceOptions.watchTtlMs`). */
  readonly watchTtlMs?: number | undefined;
  readonly reserveBlock: number;
  readonly logger: Logger;
  readonly metrics: ClusterMetrics;
  /**
   * The process's clocks and timers: every decision of the runtime and its terms reads time and
   * sets timers through it (DESIGN.md "Proving cluster mode"). Default: Node's
   * (`realProcessClock`); the deterministic simulator passes each simulated process its own.
   */
  readonly time?: ProcessClock | undefined;
  /**
   * One probe of a member's health route (whether it answers, for balance). Default: the runtime's
   * own `HealthProber` over HTTP; the simulator passes one over its network.
   */
  readonly probe?: ((serverId: string, url: string) => Promise<ProbeResult>) | undefined;
  /** Monotonic clock (ms). Default: {@link time}'s (`performance.now()`); tests may read another. */
  readonly clock?: (() => number) | undefined;
  /**
   * Wall clock (ms since the epoch). Default: {@link time}'s (`Date.now()`). The serving gate closes when either
   * clock passes its deadline: a paused VM's monotonic clock stands still while the guest is
   * stopped (tests inject both to play the pause).
   */
  readonly wallClock?: (() => number) | undefined;
  /** TEST ONLY: safety rules switched off for the reliability suite's negative controls (test-breaks.ts). Default none. */
  readonly breaks?: ReadonlySet<TestBreak> | undefined;
  /**
   * TEST ONLY (`LEASEHOLD_TEST_HAND_OVER_PAUSE_MS`): a hand-over waits this long between the
   * standby's final acknowledgement and the row move, so a test can run a pass inside that window
   * (the window in which a pass once released the very shard being handed over). Default 0.
   */
  readonly handOverPauseMs?: number | undefined;
}
