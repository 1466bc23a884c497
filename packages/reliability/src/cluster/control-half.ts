import { checkFencingOrder, checkLeaseOverlap } from "../history/index.js";
import type { History } from "../history/index.js";
import { Violations } from "../violations.js";

/** The three negative controls of the cluster suite, named after the rule each removes. */
export const CONTROL_NAMES = ["lease-wait", "epoch-fence", "gate"] as const;
export type ControlName = (typeof CONTROL_NAMES)[number];

/**
 * One half of a control's A/B: the scripted scenario run with the rule intact (A) or removed (B).
 * The control's targeted check must count 0 in A and more than 0 in B.
 */
export interface ControlHalf {
  /** False for A (rule intact), true for B (rule removed). */
  readonly ruleRemoved: boolean;
  /** `LEASEHOLD_TEST_BREAK` of the servers in this half (`undefined`: none). */
  readonly testBreak: string | undefined;
  /** Every check's violations in this half (the targeted one and the others run alongside). */
  readonly violations: Violations;
  /** Items each check examined, by check name (intervals, terms, extensions, answers). */
  readonly checked: Readonly<Record<string, number>>;
  /**
   * Scenario figures that show it did what it is for (each control documents its own), e.g. how
   * far the first holder's promise reached past the takeover. All in ms or counts.
   */
  readonly facts: Readonly<Record<string, number>>;
  /** Client calls made (for the report's operation count). */
  readonly operations: number;
  readonly elapsedMs: number;
  /** Earlier runs of this half abandoned for a `ControlSetupError` (their outcome unused). Default 0. */
  readonly setupRetries?: number | undefined;
}

/** One control: its targeted check and both halves. */
export interface ControlResult {
  readonly name: ControlName;
  /** The check that must fire in B and stay silent in A. */
  readonly check: string;
  readonly intact: ControlHalf;
  readonly removed: ControlHalf;
}

/**
 * The hold checks a control's half runs on its recorded history (no overlapping holds within a
 * client's promise, fencing tokens increasing): every violation, and what each check examined.
 */
export function holdChecks(history: History): Pick<ControlHalf, "violations" | "checked"> {
  const violations = new Violations();
  const checks = [checkLeaseOverlap(history), checkFencingOrder(history)];
  for (const c of checks) for (let n = 0; n < c.violations; n++) violations.add(c.rule, c.examples[n] ?? "(more of the same)");
  return { violations, checked: Object.fromEntries(checks.map((c) => [c.rule, c.checked])) };
}
