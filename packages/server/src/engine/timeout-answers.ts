import type { LockTimeoutResponse, WaitForLocksResponse } from "@leasehold/protocol";

/** The one answer of every lock request that timed out (frozen, so one object serves all). */
export const TIMEOUT: LockTimeoutResponse = Object.freeze({ status: "timeout" });

/** The one answer of every `wait-for-locks` that timed out or was cancelled by `lock-cancel` (frozen likewise). */
export const WAIT_TIMEOUT: WaitForLocksResponse = Object.freeze({ status: "timeout" });
