import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts", "bench/test/**/*.test.ts"],
    exclude: ["**/node_modules/**", "**/dist/**", "**/*.soak.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    reporters: process.env.CI ? ["default"] : ["default"],
  },
});
