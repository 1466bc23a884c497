/**
 * True in soak mode (`LEASEHOLD_SOAK=1`, set by `pnpm test:soak`, which runs these cluster files
 * too). A negative control over CLI processes whose rule the simulator also removes runs only
 * there: in the test command the simulator's control of that rule stands for it
 * (packages/sim/test/sim-regressions.test.ts, RULES), while the positive scenario beside it keeps
 * the real-process wiring in every run. Default: off.
 */
export const SOAK = process.env.LEASEHOLD_SOAK === "1";
