/** True when the long soak run was asked for (`LEASEHOLD_SOAK=1`). */
export const SOAK = process.env.LEASEHOLD_SOAK === "1";

/** True when the suite should (re)write docs/reliability.md: soak runs, or `LEASEHOLD_WRITE_REPORT=1`. */
export const WRITE_REPORT = SOAK || process.env.LEASEHOLD_WRITE_REPORT === "1";

/**
 * Generated cases per property: `quick` in CI, `soak` under `LEASEHOLD_SOAK=1`. A fixed seed can be
 * given with `LEASEHOLD_SEED` to replay a failure; otherwise fast-check picks (and prints) one.
 */
export function runs(quick: number, soak: number): number {
  return SOAK ? soak : quick;
}

/** The fast-check seed from `LEASEHOLD_SEED`, if set. */
export const SEED: number | undefined = process.env.LEASEHOLD_SEED === undefined ? undefined : Number(process.env.LEASEHOLD_SEED);
