import type { IssuedValue } from "./value-order-checker.js";

/** The kinds of client operation the restart load makes. */
export type LoadOperation = "lock" | "unlock" | "tryUnlock" | "timestamp";

/** One client operation of the restart load and how it ended. */
export interface OperationRecord {
  /** Which client (0-based). */
  readonly client: number;
  /** What it was. */
  readonly kind: LoadOperation;
  /** Monotonic ms just before the call. */
  readonly sentAt: number;
  /** Monotonic ms when it settled. */
  readonly settledAt: number;
  /** `ok`, `timeout` (a lock answered timeout) or `error` (it rejected). */
  readonly outcome: "ok" | "timeout" | "error";
  /** The `LeaseholdError` code when it rejected. */
  readonly code?: string | undefined;
}

/** A lock granted by a server process that was then SIGKILLed while the client held it. */
export interface OrphanedGrant {
  /** Ms from the SIGKILL to the `lostLocks` report, or undefined if none came in time. */
  readonly reportedAfterMs: number | undefined;
}

/** What the restart load recorded: every operation, every number handed out, every orphaned grant checked. */
export class LoadHistory {
  /** Every operation, in completion order. */
  readonly operations: OperationRecord[] = [];
  /** Every timestamp and fencing token received. */
  readonly values: IssuedValue[] = [];
  /** Grants whose server died while they were held and whose holder waited for the loss report. */
  readonly orphans: OrphanedGrant[] = [];
  /** Tokens granted, to make sure none ever shows up in a log line. */
  readonly tokens = new Set<string>();
  /** Tokens of a live server reported lost (the client went too long without a refresh landing). */
  lostWhileServerLive = 0;

  /** Record one operation. */
  record(op: OperationRecord): void {
    this.operations.push(op);
  }

  /** Operations by kind. */
  countByKind(): Record<LoadOperation, number> {
    const counts: Record<LoadOperation, number> = { lock: 0, unlock: 0, tryUnlock: 0, timestamp: 0 };
    for (const op of this.operations) counts[op.kind]++;
    return counts;
  }
}
