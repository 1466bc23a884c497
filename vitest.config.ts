import { defineConfig } from "vitest/config";

/**
 * Test files whose subject is timing under faults: clusters with 400 ms–3 s leader leases, crash
 * and fault-proxy cycles, mutual-exclusion histories. They run one file at a time, after the rest,
 * so no other test file competes with their servers for the machine's cores (a starved renewal
 * closes a healthy leader's gate and changes the story the test tells).
 */
const SERIAL = ["packages/server/test/cluster/**/*.test.ts", "packages/reliability/test/**/*.test.ts"];

/** Soak runs are `pnpm test:soak`, not part of `pnpm test`. */
const EXCLUDE = ["**/node_modules/**", "**/dist/**", "**/*.soak.test.ts"];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    projects: [
      {
        extends: true,
        test: {
          name: "parallel",
          include: ["packages/*/test/**/*.test.ts", "bench/test/**/*.test.ts"],
          exclude: [...EXCLUDE, ...SERIAL],
          // Two files at once on the 2-core machines these run on: most of these files wait on
          // sockets and timers, not on the CPU (measured: 333 s of files, one at a time).
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: "serial",
          include: SERIAL,
          exclude: EXCLUDE,
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
