import { sized } from "../../../src/report/index.js";

/**
 * Generated cases per property: `quick` in CI, `soak` under `LEASEHOLD_SOAK=1` (the report's
 * {@link sized}, named for what it sizes here).
 */
export function runs(quick: number, soak: number): number {
  return sized(quick, soak);
}

/**
 * The fast-check seed from `LEASEHOLD_SEED`, if set, to replay a failure: fast-check prints the seed
 * of a failing run. Unset: fast-check picks one.
 */
export const SEED: number | undefined = process.env.LEASEHOLD_SEED === undefined ? undefined : Number(process.env.LEASEHOLD_SEED);
