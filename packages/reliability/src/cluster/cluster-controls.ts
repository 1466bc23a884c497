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

/**
 * Run one negative control's A/B: its scripted scenario with the rule intact, then with it removed
 * (each half on a cluster and schema of its own, gone when it returns). Deterministic by design:
 * no random faults, so each half's targeted count is 0 (A) or above 0 (B) every time; `seed` only
 * seeds the (idle) fault proxies.
 */
export async function runControl(name: ControlName, seed: number): Promise<ControlResult> {
  const { check, run } = CONTROLS[name];
  const intact = await run(seed, false);
  const removed = await run(seed + 1, true);
  return { name, check, intact, removed };
}
