import { ControlSetupError } from "./control-cluster.js";
import { EPOCH_FENCE_CHECK, runEpochFenceControl } from "./control-epoch-fence.js";
import { GATE_CHECK, runGateControl } from "./control-gate.js";
import type { ControlHalf, ControlName, ControlResult } from "./control-half.js";
import { LEASE_WAIT_CHECK, runLeaseWaitControl } from "./control-lease-wait.js";

export { CONTROL_NAMES, type ControlHalf, type ControlName, type ControlResult } from "./control-half.js";

/** Each control's targeted check and its scripted scenario (control-*.ts). */
const CONTROLS: Record<ControlName, { readonly check: string; readonly run: (seed: number, ruleRemoved: boolean) => Promise<ControlHalf> }> = {
  "lease-wait": { check: LEASE_WAIT_CHECK, run: runLeaseWaitControl },
  "epoch-fence": { check: EPOCH_FENCE_CHECK, run: runEpochFenceControl },
  gate: { check: GATE_CHECK, run: runGateControl },
};

/** The check a control targets (what must count 0 with the rule intact and more than 0 without). */
export function controlCheck(name: ControlName): string {
  return CONTROLS[name].check;
}

/** Runs of one half abandoned for a {@link ControlSetupError} before the half fails. */
const MAX_SETUP_RETRIES = 2;

/**
 * Run one half of a control, again (with the next seed) when its set-up failed with a
 * {@link ControlSetupError}, at most {@link MAX_SETUP_RETRIES} times; answers the half with its
 * `setupRetries`. An outcome of the checks is never run again.
 */
export async function runHalf(run: (seed: number, ruleRemoved: boolean) => Promise<ControlHalf>, seed: number, ruleRemoved: boolean): Promise<ControlHalf> {
  for (let retries = 0; ; retries++) {
    try {
      return { ...(await run(seed + retries, ruleRemoved)), setupRetries: retries };
    } catch (err) {
      if (!(err instanceof ControlSetupError) || retries === MAX_SETUP_RETRIES) throw err;
    }
  }
}

/**
 * Run one negative control's A/B: its scripted scenario with the rule intact, then with it removed
 * (each half on a cluster and schema of its own, gone when it returns). Deterministic by design:
 * no random faults, so each half's targeted count is 0 (A) or above 0 (B) every time; `seed` only
 * seeds the (idle) fault proxies. A half whose set-up failed (a `ControlSetupError`: the cluster
 * did not settle, its leader changed before the fault, on a loaded machine) is run again, up to
 * {@link MAX_SETUP_RETRIES} times; an outcome of the checks never is.
 */
export async function runControl(name: ControlName, seed: number): Promise<ControlResult> {
  const { check, run } = CONTROLS[name];
  const intact = await runHalf(run, seed, false);
  const removed = await runHalf(run, seed + 100, true);
  return { name, check, intact, removed };
}
