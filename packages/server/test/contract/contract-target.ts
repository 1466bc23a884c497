import type { LockAcquiredResponse, LockResponse, LockService } from "@leasehold/protocol";
import { expect } from "vitest";
import type { EmbeddedLockService } from "../../src/service/embedded-lock-service.js";
import { waitFor } from "../support/wait-for.js";

/** One implementation under test, as a contract factory builds it. */
export interface ContractTarget {
  /** The implementation under test: every operation of the suite goes through it. */
  readonly service: LockService;
  /**
   * The lock table behind it, only to observe (how many requests wait), never to act: waiting
   * for "B is queued" is the only way to order concurrent requests without sleeping.
   */
  readonly table: EmbeddedLockService;
  close(): Promise<void>;
}

/** Options a test may ask of a factory. */
export interface ContractOptions {
  readonly leaseMs?: number | undefined;
}

/** Builds a fresh target; the suite closes every target it builds. */
export type ContractFactory = (options: ContractOptions) => Promise<ContractTarget>;

/** Assert a lock answer is `acquired` and narrow it. */
export function granted(res: LockResponse): LockAcquiredResponse {
  expect(res.status).toBe("acquired");
  if (res.status !== "acquired") throw new Error("not acquired");
  return res;
}

/** Wait until `count` lock requests wait in `namespace`. */
export function waiting(target: ContractTarget, namespace: string, count: number): Promise<void> {
  return waitFor(() => target.table.snapshot(namespace).waitingRequests === count, `${count} waiting request(s) in ${namespace}`);
}

/** Rejection of `promise` as `{ code }`, failing when it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (err) {
    return err as { code: string; message: string };
  }
  throw new Error("expected a rejection");
}
