import { ms, ViolationLog, type CheckResult } from "./check-result.js";
import type { GrantEvent, History } from "./history-types.js";

/**
 * The history itself is sound, so that rules (a)–(d) judge what really happened: every operation
 * comes from a recorded grant (same descriptor, fencing token and mode), happens after that grant
 * was received and before its release, and writes only under an exclusive lock; every release
 * names a recorded grant, once; operations are numbered in strictly increasing order. A violation
 * here means the recorder or the workload is broken, and it counts like any other.
 */
export function checkWellFormed(history: History): CheckResult {
  const log = new ViolationLog();
  const grants = new Map<string, GrantEvent>();
  for (const g of history.grants) {
    if (grants.has(g.holder)) log.add(() => `holder ${g.holder} has two grants`);
    grants.set(g.holder, g);
    if (!(g.requestSentAt <= g.grantReceivedAt)) log.add(() => `holder ${g.holder} received its grant before sending its request`);
  }
  const releasedAt = new Map<string, number>();
  for (const r of history.releases) {
    if (!grants.has(r.holder)) log.add(() => `release of unknown holder ${r.holder}`);
    if (releasedAt.has(r.holder)) log.add(() => `holder ${r.holder} released twice`);
    releasedAt.set(r.holder, Math.min(r.releasedAt, releasedAt.get(r.holder) ?? Infinity));
  }
  let lastSeq = -1;
  for (const op of history.operations) {
    const what = `${op.kind} #${op.seq} by ${op.holder}`;
    if (op.seq <= lastSeq) log.add(() => `${what} is out of sequence (after #${lastSeq})`);
    lastSeq = Math.max(lastSeq, op.seq);
    const g = grants.get(op.holder);
    if (g === undefined) {
      log.add(() => `${what}: no grant recorded for this holder`);
      continue;
    }
    if (g.descriptor !== op.descriptor || g.fencingToken !== op.fencingToken || g.mode !== op.mode) {
      log.add(() => `${what} carries ${op.descriptor}/${op.mode}/token ${op.fencingToken}, its grant ${g.descriptor}/${g.mode}/token ${g.fencingToken}`);
    }
    if (op.at < g.grantReceivedAt) log.add(() => `${what} at ${ms(op.at)} came before its grant (${ms(g.grantReceivedAt)})`);
    const released = releasedAt.get(op.holder);
    if (released !== undefined && op.at > released) log.add(() => `${what} at ${ms(op.at)} came after its release (${ms(released)})`);
    if (op.kind === "write" && op.mode !== "exclusive") log.add(() => `${what} writes under a ${op.mode} lock`);
  }
  return log.result("history well formed", history.grants.length + history.releases.length + history.operations.length);
}
