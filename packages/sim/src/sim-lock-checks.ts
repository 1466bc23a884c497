import { groupBy, heldUntil, type Freed, type Hold, type Stamps, type Violation } from "./sim-records.js";

function conflicts(a: Hold["mode"], b: Hold["mode"]): boolean {
  if (a === "permit" && b === "permit") return false;
  return !(a === "shared" && b === "shared");
}

/**
 * Exclusion: no two holders of a conflicting mode of one descriptor within the guarantees they
 * were given; and no more `permit` holders at once than the limit they named (every simulated
 * client names the same limit for a descriptor, so the limit never changed).
 */
export function exclusion(holds: readonly Hold[]): Violation[] {
  const out: Violation[] = [];
  for (const [key, list] of groupBy(holds, (h) => `${h.namespace}/${h.descriptor}`)) {
    const live = list.map((h) => ({ h, from: h.receivedAt, to: heldUntil(h) })).filter((x) => x.to > x.from);
    live.sort((a, b) => a.from - b.from);
    for (let i = 0; i < live.length; i++) {
      for (let j = i + 1; j < live.length && live[j]!.from < live[i]!.to; j++) {
        const [a, b] = [live[i]!, live[j]!];
        if (!conflicts(a.h.mode, b.h.mode)) continue;
        out.push({
          invariant: "exclusion",
          detail: `${key}: ${b.h.client} was granted ${b.h.mode} (token ${b.h.fencingToken}, leader ${b.h.leaderId}) at ${b.from.toFixed(1)} while ${a.h.client} held it ${a.h.mode} (token ${a.h.fencingToken}, leader ${a.h.leaderId}) until ${a.to.toFixed(1)}`,
        });
      }
    }
    // Permits: at each grant, the permits still held then, and that one, within the limit.
    const permits = live.filter((x) => x.h.mode === "permit");
    for (const b of permits) {
      const others = permits.filter((x) => x !== b && x.from <= b.from && x.to > b.from);
      const limit = b.h.limit ?? 1;
      if (others.length + 1 > limit) {
        out.push({ invariant: "permit-limit", detail: `${key}: ${b.h.client} was granted a permit of limit ${limit} (token ${b.h.fencingToken}, leader ${b.h.leaderId}) at ${b.from.toFixed(1)} while ${others.length} others held one: ${others.map((x) => `${x.h.client} (token ${x.h.fencingToken}) until ${x.to.toFixed(1)}`).join(", ")}` });
      }
    }
  }
  return out;
}

/** Fencing order: a grant received before another was asked for has the lower fencing token. */
export function fencingOrder(holds: readonly Hold[]): Violation[] {
  const out: Violation[] = [];
  for (const [key, list] of groupBy(holds, (h) => `${h.namespace}/${h.descriptor}`)) {
    for (const a of list) {
      for (const b of list) {
        if (a !== b && a.receivedAt < b.sentAt && a.fencingToken >= b.fencingToken) {
          out.push({ invariant: "fencing-order", detail: `${key}: token ${b.fencingToken} of ${b.client} (asked at ${b.sentAt.toFixed(1)}) is not above ${a.fencingToken} of ${a.client} (received at ${a.receivedAt.toFixed(1)})` });
        }
      }
    }
  }
  return out;
}

/** Timestamp order: a range received before another was asked for lies wholly below it. */
export function timestampOrder(stamps: readonly Stamps[]): Violation[] {
  const out: Violation[] = [];
  for (const [ns, list] of groupBy(stamps, (s) => s.namespace)) {
    const received = [...list].sort((a, b) => a.receivedAt - b.receivedAt);
    const sent = [...list].sort((a, b) => a.sentAt - b.sentAt);
    let highest = -Infinity;
    let i = 0;
    for (const b of sent) {
      for (; i < received.length && received[i]!.receivedAt < b.sentAt; i++) highest = Math.max(highest, received[i]!.start + received[i]!.count - 1);
      if (b.start <= highest) out.push({ invariant: "timestamp-order", detail: `${ns}: timestamps from ${b.start} asked at ${b.sentAt.toFixed(1)}, not above ${highest} given before` });
    }
  }
  return out;
}

/**
 * Wait-for-locks: `free` means the descriptor could have been granted to the request at some
 * moment after it arrived; so it is broken when a client held it in a conflicting mode, within its
 * guarantee, for the whole time from the request's send to its answer.
 */
export function waitForLocks(freed: readonly Freed[], holds: readonly Hold[]): Violation[] {
  const out: Violation[] = [];
  const by = groupBy(holds, (h) => `${h.namespace}/${h.descriptor}`);
  for (const w of freed) {
    const key = `${w.namespace}/${w.descriptor}`;
    const blocker = (by.get(key) ?? []).find((h) => conflicts(h.mode, w.mode) && h.receivedAt <= w.sentAt && heldUntil(h) >= w.receivedAt);
    if (blocker !== undefined) {
      out.push({
        invariant: "wait-for-locks",
        detail: `${key}: ${w.client}'s wait-for-locks (${w.mode}) sent at ${w.sentAt.toFixed(1)} was answered free at ${w.receivedAt.toFixed(1)} while ${blocker.client} held it ${blocker.mode} (token ${blocker.fencingToken}, leader ${blocker.leaderId}) from ${blocker.receivedAt.toFixed(1)} to ${heldUntil(blocker).toFixed(1)}`,
      });
    }
  }
  return out;
}
