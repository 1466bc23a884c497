/** True when the long soak run was asked for (`LEASEHOLD_SOAK=1`, set by `pnpm test:soak`). */
export const SOAK = process.env.LEASEHOLD_SOAK === "1";

/** True when the suite should (re)write its section of docs/reliability.md: soak runs, or `LEASEHOLD_WRITE_REPORT=1`. */
export const WRITE_REPORT = SOAK || process.env.LEASEHOLD_WRITE_REPORT === "1";

/** Pick the quick (CI) or soak size of a run. */
export function sized<T>(quick: T, soak: T): T {
  return SOAK ? soak : quick;
}
