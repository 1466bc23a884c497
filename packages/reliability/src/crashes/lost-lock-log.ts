import type { LockClient, LostLockReason } from "@leasehold/client";

/** One `lostLocks` report as it arrived. */
export interface LostReport {
  /** The reason the client gave. */
  readonly reason: LostLockReason;
  /** Monotonic ms when it arrived. */
  readonly at: number;
}

/** Every token a client reported on `lostLocks`, and a way to wait for one. */
export class LostLockLog {
  readonly #reports = new Map<string, LostReport>();
  readonly #waiting = new Map<string, (report: LostReport) => void>();
  /** Reports per reason. */
  readonly byReason: Partial<Record<LostLockReason, number>> = {};

  /** Subscribe to `client.lostLocks` for the client's lifetime. */
  constructor(client: LockClient) {
    client.lostLocks.subscribe({
      next: ({ token, reason }) => {
        const report = { reason, at: performance.now() };
        this.#reports.set(token, report);
        this.byReason[reason] = (this.byReason[reason] ?? 0) + 1;
        this.#waiting.get(token)?.(report);
        this.#waiting.delete(token);
      },
    });
  }

  /** The report for `token`, if one came. */
  get(token: string): LostReport | undefined {
    return this.#reports.get(token);
  }

  /** Resolves with the report for `token` once it comes, or undefined if none came by `deadline` (monotonic ms). */
  waitFor(token: string, deadline: number): Promise<LostReport | undefined> {
    const known = this.#reports.get(token);
    if (known !== undefined) return Promise.resolve(known);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#waiting.delete(token);
        resolve(undefined);
      }, Math.max(0, deadline - performance.now()));
      this.#waiting.set(token, (report) => {
        clearTimeout(timer);
        resolve(report);
      });
    });
  }
}
