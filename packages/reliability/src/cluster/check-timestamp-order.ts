import type { Violations } from "../violations.js";

/** One answered timestamp call: the numbers `[first, last]` it got, and when it was sent and answered. */
export interface TimestampAnswer {
  readonly namespace: string;
  readonly first: number;
  readonly last: number;
  /** Monotonic ms (`performance.now()` of the one process running every client) just before sending. */
  readonly sentAt: number;
  /** Monotonic ms when the answer was in hand. */
  readonly receivedAt: number;
  /** What asked: `timestamps`, `transactions` (start timestamps) or a lock's fencing token stream is not included. */
  readonly via: string;
}

/**
 * Timestamps of a namespace, whichever server answered: (1) unique, no number handed out twice;
 * (2) real-time ordered, if A's answer was in hand before B's request was sent then every number
 * of A is below every number of B. Per namespace, O(n log n): ranges sorted by first number must
 * not overlap, and a sweep over requests in send order keeps the highest number answered before.
 */
export function checkTimestampOrder(answers: readonly TimestampAnswer[], violations: Violations): number {
  const byNamespace = new Map<string, TimestampAnswer[]>();
  for (const a of answers) {
    let list = byNamespace.get(a.namespace);
    if (list === undefined) byNamespace.set(a.namespace, (list = []));
    list.push(a);
  }
  for (const [namespace, list] of byNamespace) {
    const byValue = [...list].sort((x, y) => x.first - y.first);
    for (let i = 1; i < byValue.length; i++) {
      const a = byValue[i - 1]!;
      const b = byValue[i]!;
      violations.expect(b.first > a.last, "timestamps unique", () => `${namespace}: ${b.via} got [${b.first}, ${b.last}], overlapping [${a.first}, ${a.last}] of a ${a.via}`);
    }
    const received = [...list].sort((x, y) => x.receivedAt - y.receivedAt);
    const sent = [...list].sort((x, y) => x.sentAt - y.sentAt);
    let next = 0;
    let highest: TimestampAnswer | undefined;
    for (const b of sent) {
      for (let a = received[next]; a !== undefined && a.receivedAt < b.sentAt; a = received[++next]) {
        if (highest === undefined || a.last > highest.last) highest = a;
      }
      const h = highest;
      if (h === undefined) continue;
      violations.expect(b.first > h.last, "timestamps real-time ordered", () =>
        `${namespace}: a ${b.via} sent at ${b.sentAt.toFixed(1)} got ${b.first}, not above ${h.last} answered to a ${h.via} at ${h.receivedAt.toFixed(1)}`,
      );
    }
  }
  return answers.length;
}
