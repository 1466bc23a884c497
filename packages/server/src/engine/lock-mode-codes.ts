import type { LockMode } from "@leasehold/protocol";

/** No holder. Modes are small integers inside the engine so compatibility checks compare numbers. */
export const NO_MODE = -1;
/** Conflicts with every other holder. */
export const EXCLUSIVE = 0;
/** Shares with shared holders only. */
export const SHARED = 1;
/** Shares with permit holders up to the descriptor's live limit. */
export const PERMIT = 2;

/** The engine's code of a wire mode. */
export function modeCode(mode: LockMode): number {
  return mode === "exclusive" ? EXCLUSIVE : mode === "shared" ? SHARED : PERMIT;
}

/** The wire mode of a code (never {@link NO_MODE}). */
export function modeName(code: number): LockMode {
  return code === EXCLUSIVE ? "exclusive" : code === SHARED ? "shared" : "permit";
}
