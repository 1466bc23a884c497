import { LeaseholdError } from "@leasehold/protocol";

/** The `CANCELLED` error of a call its caller aborted, keeping the signal's reason as the cause. */
export function cancelledBy(signal: AbortSignal, message = "lock was aborted by its signal; nothing is held"): LeaseholdError {
  return new LeaseholdError("CANCELLED", message, {}, { cause: signal.reason });
}
