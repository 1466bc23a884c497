import type { LockResponse } from "@leasehold/protocol";
import type { LeaseLapse } from "./lease-lapse.js";
import type { LockTable } from "./lock-table.js";
import type { PendingLock } from "./pending-lock.js";
import type { SettledOutcome } from "./lock-table.js";
import { fingerprintOf } from "./token-fingerprint.js";

/** What reaping has done since the engine started (the engine's metrics read it). */
export interface ReapTally {
  /** Lapsed lease entries handled, plus one per reaping pass: a diagnostic that reaping stays proportional to what is due. */
  visits: number;
  /** Tokens released because their lease ran out. */
  lapses: number;
  /** Waiting requests that reached their deadline. */
  timeouts: number;
}

/** Where reaping reports what it ended. */
export interface ReapHooks {
  /** A waiter reached its deadline: its caller gets `timeout`. */
  readonly onSettled: (pending: PendingLock, outcome: SettledOutcome) => void;
  /** A token's lease ran out and it was released (for the log line and metrics). */
  readonly onLeaseLapse: (namespace: string, descriptorCount: number, lapse: LeaseLapse) => void;
  /** The answer a waiter gets at its deadline. */
  readonly timeout: LockResponse;
}

/**
 * Reap what is due at `now`, in time order: lease lapses and waiter deadlines interleaved by their
 * times, so that a late catch-up (a host timer that fired late, or an operation after a quiet
 * spell) ends with what would have happened on time. Reaping every lapse first would let a lapse
 * grant a waiter whose deadline had already passed before it. On a tie the lapse goes first: at
 * its deadline the waiter was still waiting.
 */
export function reapDue(table: LockTable, now: number, tally: ReapTally, hooks: ReapHooks): void {
  const leases = table.leases;
  const deadlines = table.deadlines;
  for (;;) {
    const head = leases.head;
    const top = deadlines.peek();
    const lapseAt = head === null ? Infinity : head.expiresAt;
    if (top === undefined || lapseAt <= top.deadline) {
      if (head === null || lapseAt > now) break;
      tally.visits++;
      const ns = head.namespace;
      const count = head.heldCount;
      const lapse: LeaseLapse = {
        fingerprint: fingerprintOf(head),
        clientDescription: head.clientDescription,
        firstDescriptor: count > 0 ? head.heldAt(0).key : undefined,
        startTimestamp: head.startTimestamp === 0 ? undefined : head.startTimestamp,
        heldForMs: Math.max(0, Math.floor(now - head.grantedAt)),
      };
      table.releaseToken(head, "lapse");
      tally.lapses++;
      hooks.onLeaseLapse(ns.name, count, lapse);
    } else {
      if (top.deadline > now) break;
      tally.timeouts++;
      hooks.onSettled(table.endWaiting(top.request, "timeout"), hooks.timeout);
    }
  }
  tally.visits++;
}
