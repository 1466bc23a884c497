/**
 * Who a lapsed token was, for the lapse warning (docs/operations.md "Logs"): enough to find the
 * worker that died, never the token itself.
 */
export interface LeaseLapse {
  /** The token's fingerprint (see `tokenFingerprint`). */
  readonly fingerprint: string;
  /** The lock request's `clientDescription`; undefined when it had none (and for immutable-timestamp locks). */
  readonly clientDescription: string | undefined;
  /** The smallest descriptor it held; undefined for an immutable-timestamp lock. */
  readonly firstDescriptor: string | undefined;
  /** The start timestamp of an immutable-timestamp lock; undefined for a lock request. */
  readonly startTimestamp: number | undefined;
  /** How long it was held, from grant to lapse, in whole milliseconds. */
  readonly heldForMs: number;
}
