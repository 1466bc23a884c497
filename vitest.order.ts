import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Seconds each test file took in a fresh-clone run of `pnpm test` (2-vCPU VM, 2026-11-29 12:18
 * UTC; parallel files under 5 s and cluster files under 3 s are left out). Within a project, files
 * start longest first: vitest's own order (its duration cache, or file size on a fresh clone, which
 * is how CI runs) once started the 142 s simulator budget 209 s into the parallel project, which
 * then ran on one core alone for 100 s.
 * The figures only order the files; a stale one costs some packing, never a result.
 */
const EXPECTED_SECONDS: Readonly<Record<string, number>> = {
  // parallel
  "packages/sim/test/sim-budget-1-500.test.ts": 46,
  "packages/sim/test/sim-budget-501-1000.test.ts": 45,
  "packages/client/test/cli/leasehold-lock.test.ts": 35,
  "packages/consumer/test/consumer.test.ts": 34,
  "packages/txn/test/bank-transfers.test.ts": 18,
  "packages/reliability/test/bad-input/bad-input.test.ts": 14,
  "packages/txn/test/write-skew.test.ts": 12,
  "packages/txn/test/sweep.test.ts": 12,
  "packages/client/test/ui/status-page.browser.test.ts": 10,
  "packages/sim/test/sim-regressions.test.ts": 10,
  "packages/client/test/ui/cluster-status-page.browser.test.ts": 10,
  "packages/client/test/recipes/job-semaphore.test.ts": 10,
  "packages/server/test/cluster/cluster-shared-signal.test.ts": 10,
  "packages/client/test/cli/leasehold-inspect-revoke.test.ts": 9,
  "packages/txn/test/read-cache-history.test.ts": 8,
  "packages/server/test/engine/replication.test.ts": 8,
  "packages/client/test/client-http-batched.test.ts": 8,
  "packages/client/test/client-http.test.ts": 7,
  "packages/client/test/client-embedded.test.ts": 7,
  "packages/client/test/with-lock-lease.test.ts": 6,
  "packages/client/test/recipes/work-queue-claims.test.ts": 6,
  "packages/sim/test/sim-run.test.ts": 6,
  "packages/client/test/cluster-routing.test.ts": 5,
  "packages/client/test/watch-locks.test.ts": 5,
  "packages/server/test/cli/cli-flags.test.ts": 5,
  "packages/client/test/cluster-stale-map.test.ts": 5,
  // cluster
  "packages/server/test/cluster/cluster-slow-database.test.ts": 31,
  "packages/server/test/cluster/cluster-waits-and-leases.test.ts": 17,
  "packages/server/test/cluster/cluster-unreachable-start.test.ts": 15,
  "packages/server/test/cluster/replication/cluster-protected.test.ts": 14,
  "packages/server/test/cluster/cluster-operations.test.ts": 13,
  "packages/server/test/cluster/cluster-handover.test.ts": 11,
  "packages/server/test/cluster/cluster-servers.test.ts": 11,
  "packages/server/test/cluster/cluster-members.test.ts": 10,
  "packages/server/test/cluster/replication/cluster-hand-over-pass.test.ts": 9,
  "packages/server/test/cluster/cluster-safety-order.test.ts": 8,
  "packages/server/test/cluster/cluster-cold-start.test.ts": 8,
  "packages/server/test/cluster/cluster-lock-watches.test.ts": 8,
  "packages/server/test/cluster/replication/cluster-takeover-with-state.test.ts": 7,
  "packages/server/test/cluster/cluster-map-epochs.test.ts": 7,
  "packages/server/test/cluster/replication/cluster-standby-restarted-idle.test.ts": 7,
  "packages/server/test/cluster/cluster-lease-wait-valid-for.test.ts": 6,
  "packages/server/test/cluster/replication/cluster-carried-lapse.test.ts": 6,
  "packages/server/test/cluster/cluster-duplicate-id.test.ts": 6,
  "packages/server/test/cluster/replication/cluster-carried-waiter.test.ts": 5,
  "packages/server/test/cluster/replication/cluster-retry-partition.test.ts": 5,
  "packages/server/test/cluster/cluster-import-bound.test.ts": 5,
  "packages/server/test/cluster/replication/cluster-stopping-points.test.ts": 5,
  "packages/server/test/cluster/cluster-take-back.test.ts": 4,
  "packages/server/test/cluster/replication/cluster-standby.test.ts": 4,
  "packages/server/test/cluster/cluster-deposed.test.ts": 3,
  "packages/server/test/cluster/replication/cluster-stop-gets-standby.test.ts": 3,
  // serial
  "packages/reliability/test/crashes/crashes.test.ts": 33,
  "packages/reliability/test/fault-proxy/fault-proxy-load.test.ts": 28,
  "packages/reliability/test/mutual-exclusion/mutual-exclusion.test.ts": 25,
  "packages/reliability/test/cluster/cluster-repeated-crash.test.ts": 23,
  "packages/reliability/test/cluster/cluster-standby-faults.test.ts": 21,
  "packages/reliability/test/security/security.test.ts": 15,
  "packages/reliability/test/cluster/cluster.test.ts": 13,
  "packages/reliability/test/fault-proxy/lease-after-wait.test.ts": 6,
  "packages/reliability/test/fault-proxy/fault-proxy.test.ts": 5,
};

/**
 * Vitest's order (projects by `groupOrder`, one project's files together), and within a project
 * the files of {@link EXPECTED_SECONDS} first, longest first, then the rest in vitest's order.
 */
export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const base = await super.sort(files);
    const at = new Map(base.map((file, i) => [file, i]));
    const seconds = (file: TestSpecification): number => EXPECTED_SECONDS[relative(file.project.config.root, file.moduleId).split("\\").join("/")] ?? 0;
    return base.slice().sort((a, b) => {
      const group = a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder;
      if (group !== 0) return group;
      if (a.project.name !== b.project.name) return at.get(a)! - at.get(b)!;
      return seconds(b) - seconds(a) || at.get(a)! - at.get(b)!;
    });
  }
}
