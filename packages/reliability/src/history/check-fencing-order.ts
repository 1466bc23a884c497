import { byDescriptor, ms, ViolationLog, type CheckResult } from "./check-result.js";
import type { GrantEvent, History } from "./history-types.js";

/** The grant with the highest token among some set, or undefined for none. */
type Highest = GrantEvent | undefined;

function higher(a: Highest, b: GrantEvent): GrantEvent {
  return a === undefined || b.fencingToken > a.fencingToken ? b : a;
}

function describe(later: GrantEvent, earlier: GrantEvent, why: string): string {
  return (
    `${later.descriptor}: ${later.mode} holder ${later.holder} got token ${later.fencingToken}, not above token ` +
    `${earlier.fencingToken} of ${earlier.mode} holder ${earlier.holder}, which ${why}`
  );
}

/** A guarantee that had not run out when the grant arrived. */
function live(g: GrantEvent): boolean {
  return g.grantReceivedAt < g.guaranteeEndsAt;
}

/**
 * Rule (b): fencing tokens strictly increase in grant order, per descriptor.
 *
 * The server's grant order is not observed directly, so the rule uses the two orders the client
 * can prove. Grant A comes before grant B when
 * 1. A was received before B's request was sent (real-time order), or
 * 2. A and B conflict (one is exclusive), both arrived inside their guarantee, and A was received
 *    before B: the server grants B only after A was released (which the holder does after
 *    receiving A) or lapsed (which is after A's guarantee, so after A was received), so the
 *    receipt order of such a pair is the server's grant order.
 * For every such pair A's token must be lower than B's. Tokens must also be unique per descriptor.
 * Computed per descriptor by one sweep in order of receipt (keeping the highest token received
 * so far overall and among exclusive grants) and one merge of receipt times against send times:
 * O(n log n). One violation is counted per grant whose token is not above every grant before it
 * (or repeats another grant's token).
 */
export function checkFencingOrder(history: History): CheckResult {
  const log = new ViolationLog();
  for (const grants of byDescriptor(history.grants).values()) {
    const flagged = new Set<GrantEvent>();
    const seen = new Map<number, GrantEvent>();
    for (const g of grants) {
      const twin = seen.get(g.fencingToken);
      if (twin === undefined) seen.set(g.fencingToken, g);
      else {
        flagged.add(g);
        log.add(() => describe(g, twin, "has the same token"));
      }
    }
    const received = [...grants].sort((x, y) => x.grantReceivedAt - y.grantReceivedAt);
    const sent = [...grants].sort((x, y) => x.requestSentAt - y.requestSentAt);
    // 1. Real-time order: the highest token among grants received before each request was sent.
    let next = 0;
    let before: Highest;
    for (const b of sent) {
      for (let a = received[next]; a !== undefined && a.grantReceivedAt < b.requestSentAt; a = received[++next]) before = higher(before, a);
      if (before !== undefined && before.fencingToken >= b.fencingToken && !flagged.has(b)) {
        const earlier = before;
        flagged.add(b);
        log.add(() => describe(b, earlier, `was received (${ms(earlier.grantReceivedAt)}) before this request was sent (${ms(b.requestSentAt)})`));
      }
    }
    // 2. Conflicting live grants, in order of receipt; grants received at the same instant are not ordered.
    let anyLive: Highest;
    let exclusiveLive: Highest;
    for (let i = 0; i < received.length; ) {
      let j = i;
      const at = received[i]?.grantReceivedAt;
      while (received[j] !== undefined && received[j]?.grantReceivedAt === at) j++;
      const group = received.slice(i, j);
      for (const b of group) {
        if (!live(b) || flagged.has(b)) continue;
        const rival = b.mode === "exclusive" ? anyLive : exclusiveLive;
        if (rival !== undefined && rival.fencingToken >= b.fencingToken) {
          log.add(() => describe(b, rival, `conflicts with it and was received earlier (${ms(rival.grantReceivedAt)} < ${ms(b.grantReceivedAt)}), both inside their guarantees`));
        }
      }
      for (const b of group) {
        if (!live(b)) continue;
        anyLive = higher(anyLive, b);
        if (b.mode === "exclusive") exclusiveLive = higher(exclusiveLive, b);
      }
      i = j;
    }
  }
  return log.result("(b) fencing tokens increase in grant order", history.grants.length);
}
