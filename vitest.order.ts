import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Seconds each long test file took in a fresh-clone run of `pnpm test` (2-core machine, 2026-11-29;
 * files under 7 s are left out). Within a project, files start longest first: vitest's own order
 * (its duration cache, or file size on a fresh clone, which is how CI runs) started the 142 s
 * simulator budget 209 s into the parallel project, which then ran on one core alone for 100 s,
 * and left the cluster project's 42 s file for its end. The figures only order the files; a stale
 * one costs some packing, never a result.
 */
const EXPECTED_SECONDS: Readonly<Record<string, number>> = {
  // parallel
  "packages/sim/test/sim-budget-1-500.test.ts": 75,
  "packages/sim/test/sim-budget-501-1000.test.ts": 75,
  "packages/txn/test/bank-transfers.test.ts": 50,
  "packages/server/test/engine/replication.test.ts": 35,
  "packages/txn/test/write-skew.test.ts": 20,
  "packages/server/test/inspection/large-namespace.test.ts": 18,
  "packages/sim/test/sim-regressions.test.ts": 15,
  "packages/server/test/cli/cli-flags.test.ts": 15,
  "packages/server/test/cluster/cluster-shared-signal.test.ts": 13,
  "packages/client/test/with-lock-lease.test.ts": 11,
  // cluster
  "packages/server/test/cluster/cluster-slow-database.test.ts": 42,
  "packages/server/test/cluster/replication/cluster-protected.test.ts": 38,
  "packages/server/test/cluster/cluster-unreachable-start.test.ts": 28,
  "packages/server/test/cluster/replication/cluster-takeover-with-state.test.ts": 27,
  "packages/server/test/cluster/replication/cluster-hand-over-pass.test.ts": 24,
  "packages/server/test/cluster/replication/cluster-carried-waiter.test.ts": 23,
  "packages/server/test/cluster/cluster-operations.test.ts": 23,
  "packages/server/test/cluster/cluster-members.test.ts": 22,
  "packages/server/test/cluster/replication/cluster-retry-partition.test.ts": 21,
  "packages/server/test/cluster/cluster-waits-and-leases.test.ts": 19,
  "packages/server/test/cluster/cluster-cli.test.ts": 19,
  "packages/server/test/cluster/replication/cluster-balance-with-state.test.ts": 18,
  "packages/server/test/cluster/replication/cluster-stop-gets-standby.test.ts": 17,
  "packages/server/test/cluster/cluster-duplicate-id.test.ts": 17,
  "packages/server/test/cluster/replication/cluster-mixed-lease-ms.test.ts": 14,
  "packages/server/test/cluster/cluster-servers.test.ts": 14,
  "packages/server/test/cluster/cluster-handover.test.ts": 14,
  "packages/server/test/cluster/replication/cluster-standby-restarted-idle.test.ts": 12,
  "packages/server/test/cluster/cluster-cold-start.test.ts": 12,
  "packages/server/test/cluster/cluster-safety-order.test.ts": 9,
  "packages/server/test/cluster/cluster-map-epochs.test.ts": 9,
  "packages/server/test/cluster/cluster-lease-wait-valid-for.test.ts": 9,
  "packages/server/test/cluster/cluster-lock-watches.test.ts": 8,
  "packages/server/test/cluster/replication/cluster-carried-lapse.test.ts": 8,
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
