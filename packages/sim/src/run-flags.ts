import type { RunOptions } from "./sim-run.js";

/**
 * The command-line flags that switch a {@link RunOptions} field on, shared by `pnpm sim` (cli.ts)
 * and `pnpm sim:breaks` (breaks-table.ts), in the order a replay command names them.
 */
export const RUN_FLAGS = {
  "--swarm": "swarm",
  "--full-wait-resends": "fullWaitResends",
  "--aimed": "aimed",
  "--blind-taker": "blindTaker",
  "--host-crashes": "hostCrashes",
} as const;

/** The run options the flags set: each false unless its flag is given. */
export type RunFlags = { -readonly [K in (typeof RUN_FLAGS)[keyof typeof RUN_FLAGS]]: boolean };

/** Every run flag off. */
export function noRunFlags(): RunFlags {
  return { swarm: false, fullWaitResends: false, aimed: false, blindTaker: false, hostCrashes: false };
}

/** Set the field `flag` switches on in `flags`; false when `flag` is not a run flag. */
export function setRunFlag(flags: RunFlags, flag: string): boolean {
  const field = (RUN_FLAGS as Readonly<Record<string, keyof RunFlags>>)[flag];
  if (field === undefined) return false;
  flags[field] = true;
  return true;
}

/** Throws a RangeError when the flags do not go together (`--blind-taker` adds strikes to `--aimed`'s faults). */
export function checkRunFlags(flags: RunFlags): void {
  if (flags.blindTaker && !flags.aimed) throw new RangeError("--blind-taker needs --aimed: it adds strikes to the aimed hand-over faults");
}

/** The flags that replay `flags`, each with a leading space (`""` with none). */
export function runFlagsText(flags: RunFlags): string {
  return Object.entries(RUN_FLAGS)
    .filter(([, field]) => flags[field])
    .map(([flag]) => ` ${flag}`)
    .join("");
}
