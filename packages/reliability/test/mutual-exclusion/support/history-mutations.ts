import { byDescriptor } from "../../../src/history/check-result.js";
import type { History } from "../../../src/history/index.js";

/**
 * The history with every guarantee stretched to `requestSentAt + ms`: with `ms` longer than the
 * server keeps an unrefreshed lock, paused holders' guarantees now cover the grants that followed
 * their lapse, so rule (a) must fire. Shows that (a) can fail on a real run's data.
 */
export function stretchGuarantees(history: History, ms: number): History {
  return { ...history, grants: history.grants.map((g) => ({ ...g, guaranteeEndsAt: g.requestSentAt + ms })) };
}

/**
 * The history with each descriptor's fencing tokens mirrored (lowest ↔ highest), in grants and
 * operations alike: grant order now runs against the tokens, so rule (b) must fire.
 */
export function reverseTokens(history: History): History {
  const mirror = new Map<string, (t: number) => number>();
  for (const [d, grants] of byDescriptor(history.grants)) {
    const tokens = grants.map((g) => g.fencingToken);
    const sum = Math.min(...tokens) + Math.max(...tokens);
    mirror.set(d, (t) => sum - t);
  }
  const flip = (d: string, t: number): number => mirror.get(d)?.(t) ?? t;
  return {
    ...history,
    grants: history.grants.map((g) => ({ ...g, fencingToken: flip(g.descriptor, g.fencingToken) })),
    operations: history.operations.map((o) => ({ ...o, fencingToken: flip(o.descriptor, o.fencingToken) })),
  };
}
