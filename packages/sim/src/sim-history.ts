import type { LockMode } from "@leasehold/protocol";

/** One lock a simulated client was told it holds, and what it learned of it afterwards. */
export interface Hold {
  readonly client: string;
  readonly namespace: string;
  readonly descriptor: string;
  readonly mode: LockMode;
  readonly token: string;
  readonly fencingToken: number;
  readonly leaderId: string;
  /** True time the lock request (or the first send of its `requestId`) left the client. */
  readonly sentAt: number;
  /** True time the grant reached the client. */
  readonly receivedAt: number;
  /**
   * Until when the client was promised the lock: the first send plus `validForMs`, moved on by
   * every refresh that answered the token (its send time plus its `validForMs`).
   */
  guaranteeEnd: number;
  /** True time the client sent the unlock (it stops using the lock then), `Infinity` while held. */
  releasedAt: number;
  /** True time a refresh sent inside the guarantee answered without the token, `null` when never. */
  lostAt: number | null;
}

/** A range of timestamps a client was given. */
interface Stamps {
  readonly namespace: string;
  readonly start: number;
  readonly count: number;
  readonly sentAt: number;
  readonly receivedAt: number;
}

/** A fault's span, and whether a crash of one server must lose nothing during it (the cluster was protected). */
interface Failure {
  readonly what: string;
  readonly from: number;
  to: number;
  /** The cluster was protected when it began and no other failure was under way. */
  readonly single: boolean;
}

/** One broken promise, by the invariant it breaks. */
export interface Violation {
  readonly invariant: "exclusion" | "fencing-order" | "timestamp-order" | "durability" | "liveness" | "bound-fence" | "protected-claim";
  readonly detail: string;
}

/**
 * What the simulated clients were told, in true time, and the checks of the cluster's promises
 * against it (DESIGN.md "Proving cluster mode": invariants from the clients' side):
 * - exclusion: no two holders of a conflicting mode within the guarantees they were given;
 * - fencing order: a grant received before another was asked for has the lower fencing token;
 * - timestamp order: a range received before another was asked for lies wholly below it;
 * - durability: no lock reported lost (a refresh inside its guarantee that answered without it)
 *   while every failure during its life was a single failure of a protected cluster.
 */
export class SimHistory {
  readonly holds: Hold[] = [];
  private readonly stamps: Stamps[] = [];
  private readonly failures: Failure[] = [];
  readonly extra: Violation[] = [];

  /** A grant reached `client`. */
  granted(hold: Omit<Hold, "guaranteeEnd" | "releasedAt" | "lostAt">, validForMs: number): Hold {
    const h: Hold = { ...hold, guaranteeEnd: hold.sentAt + validForMs, releasedAt: Infinity, lostAt: null };
    this.holds.push(h);
    return h;
  }

  /** A refresh of `hold` sent at `sentAt` answered (`kept`: the token was in the answer) at `at`. */
  refreshed(hold: Hold, sentAt: number, kept: boolean, validForMs: number, at: number): void {
    if (kept) hold.guaranteeEnd = Math.max(hold.guaranteeEnd, sentAt + validForMs);
    else if (sentAt < hold.guaranteeEnd && hold.lostAt === null && hold.releasedAt === Infinity) hold.lostAt = at;
  }

  /** The client sent the unlock of `hold` at `at`. */
  released(hold: Hold, at: number): void {
    hold.releasedAt = Math.min(hold.releasedAt, at);
  }

  timestamps(namespace: string, start: number, count: number, sentAt: number, receivedAt: number): void {
    this.stamps.push({ namespace, start, count, sentAt, receivedAt });
  }

  /** A fault began (`single`: the cluster was protected and nothing else had failed); answers its end-setter. */
  failed(what: string, at: number, single: boolean): (to: number) => void {
    const failure: Failure = { what, from: at, to: Infinity, single };
    this.failures.push(failure);
    return (to) => (failure.to = to);
  }

  /** A liveness (or other) promise broken, found by the run itself. */
  violated(v: Violation): void {
    this.extra.push(v);
  }

  /** Every violation, each once. */
  check(): Violation[] {
    return [...this.exclusion(), ...this.fencingOrder(), ...this.timestampOrder(), ...this.durability(), ...this.extra];
  }

  private byDescriptor(): Map<string, Hold[]> {
    const by = new Map<string, Hold[]>();
    for (const h of this.holds) {
      const key = `${h.namespace}/${h.descriptor}`;
      let list = by.get(key);
      if (list === undefined) by.set(key, (list = []));
      list.push(h);
    }
    return by;
  }

  private exclusion(): Violation[] {
    const out: Violation[] = [];
    for (const [key, holds] of this.byDescriptor()) {
      const live = holds.map((h) => ({ h, from: h.receivedAt, to: Math.min(h.releasedAt, h.guaranteeEnd) })).filter((x) => x.to > x.from);
      live.sort((a, b) => a.from - b.from);
      for (let i = 0; i < live.length; i++) {
        for (let j = i + 1; j < live.length && live[j]!.from < live[i]!.to; j++) {
          const [a, b] = [live[i]!, live[j]!];
          if (a.h.mode === "shared" && b.h.mode === "shared") continue;
          if (a.h.mode === "permit" || b.h.mode === "permit") continue;
          out.push({
            invariant: "exclusion",
            detail: `${key}: ${b.h.client} was granted ${b.h.mode} (token ${b.h.fencingToken}, leader ${b.h.leaderId}) at ${b.from.toFixed(1)} while ${a.h.client} held it ${a.h.mode} (token ${a.h.fencingToken}, leader ${a.h.leaderId}) until ${a.to.toFixed(1)}`,
          });
        }
      }
    }
    return out;
  }

  private fencingOrder(): Violation[] {
    const out: Violation[] = [];
    for (const [key, holds] of this.byDescriptor()) {
      for (const a of holds) {
        for (const b of holds) {
          if (a !== b && a.receivedAt < b.sentAt && a.fencingToken >= b.fencingToken) {
            out.push({ invariant: "fencing-order", detail: `${key}: token ${b.fencingToken} of ${b.client} (asked at ${b.sentAt.toFixed(1)}) is not above ${a.fencingToken} of ${a.client} (received at ${a.receivedAt.toFixed(1)})` });
          }
        }
      }
    }
    return out;
  }

  private timestampOrder(): Violation[] {
    const out: Violation[] = [];
    const byNs = new Map<string, Stamps[]>();
    for (const s of this.stamps) {
      let list = byNs.get(s.namespace);
      if (list === undefined) byNs.set(s.namespace, (list = []));
      list.push(s);
    }
    for (const [ns, list] of byNs) {
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

  private durability(): Violation[] {
    const out: Violation[] = [];
    for (const h of this.holds) {
      if (h.lostAt === null) continue;
      const during = this.failures.filter((f) => f.from < h.lostAt! && f.to > h.receivedAt);
      if (during.every((f) => f.single)) {
        const what = during.map((f) => f.what).join(", ") || "no failure";
        out.push({ invariant: "durability", detail: `${h.namespace}/${h.descriptor}: ${h.client}'s lock (token ${h.fencingToken}, leader ${h.leaderId}) granted at ${h.receivedAt.toFixed(1)} (asked at ${h.sentAt.toFixed(1)}), reported lost at ${h.lostAt.toFixed(1)} inside its guarantee (until ${h.guaranteeEnd.toFixed(1)}), through ${what}` });
      }
    }
    return out;
  }
}
