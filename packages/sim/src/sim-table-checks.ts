import type { LockEvent } from "@leasehold/protocol";
import { groupBy, type Asked, type Hold, type IdSeen, type Violation, type WatchAnswer } from "./sim-records.js";

/**
 * A lock table never serves again once a newer one of its namespace served: per namespace, no id
 * (a `leaderId`, or a lock-event `logId`) is answered for a request sent after another id was
 * answered, when that other id was itself answered for a request sent after the first id had been
 * answered. A term never restarts (a later acquisition is a new table with a new `leaderId`), and a
 * table that moves with the leadership keeps its id: so ids seen in a namespace follow one another
 * and none comes back (PROTOCOL.md "Leader ids", "Lock watches": `logId` changes exactly when the
 * table starts empty).
 */
export function idsNeverReturn(seen: readonly IdSeen[], kind: string): Violation[] {
  const out: Violation[] = [];
  for (const [ns, list] of groupBy(seen, (s) => s.namespace)) {
    const ids = groupBy(list, (s) => s.id);
    if (ids.size < 2) continue;
    const span = new Map<string, { firstReceived: IdSeen; lastSent: IdSeen }>();
    for (const [id, of] of ids) {
      let firstReceived = of[0]!;
      let lastSent = of[0]!;
      for (const s of of) {
        if (s.receivedAt < firstReceived.receivedAt) firstReceived = s;
        if (s.sentAt > lastSent.sentAt) lastSent = s;
      }
      span.set(id, { firstReceived, lastSent });
    }
    for (const [a, { firstReceived, lastSent }] of span) {
      for (const [b, of] of ids) {
        if (b === a) continue;
        const between = of.find((s) => s.sentAt > firstReceived.receivedAt && s.receivedAt < lastSent.sentAt);
        if (between === undefined) continue;
        out.push({
          invariant: "leader-id",
          detail: `${ns}: ${kind} ${a} (first answered at ${firstReceived.receivedAt.toFixed(1)} by ${firstReceived.what}) answered again for a request sent at ${lastSent.sentAt.toFixed(1)} (${lastSent.what}), after ${kind} ${b} was answered at ${between.receivedAt.toFixed(1)} (${between.what}, sent at ${between.sentAt.toFixed(1)})`,
        });
        break;
      }
    }
  }
  return out;
}

/** A `logId` names one table: every answer holding both ids pairs it with one `leaderId`. */
export function logIdsOfOneTable(pairs: readonly { namespace: string; leaderId: string; logId: string; at: number }[]): Violation[] {
  const out: Violation[] = [];
  for (const [key, list] of groupBy(pairs, (p) => `${p.namespace} ${p.logId}`)) {
    const other = list.find((p) => p.leaderId !== list[0]!.leaderId);
    if (other !== undefined) {
      out.push({ invariant: "leader-id", detail: `${key.replace(" ", ": logId ")} was answered with leaderId ${list[0]!.leaderId} at ${list[0]!.at.toFixed(1)} and with ${other.leaderId} at ${other.at.toFixed(1)}` });
    }
  }
  return out;
}

/** A refresh that kept a token answered the `leaderId` of the table that granted it. */
export function refreshedUnderOwnLeader(refreshes: readonly { hold: Hold | { client: string; namespace: string; leaderId: string; token: string }; leaderId: string; at: number }[]): Violation[] {
  return refreshes
    .filter((r) => r.leaderId !== r.hold.leaderId)
    .map((r) => ({ invariant: "leader-id" as const, detail: `${r.hold.namespace}: ${r.hold.client}'s token granted under leaderId ${r.hold.leaderId} was refreshed at ${r.at.toFixed(1)} under leaderId ${r.leaderId}` }));
}

function eventKey(e: LockEvent): string {
  return `${e.kind} ${e.descriptors.map((d) => `${d.descriptor}:${d.mode}`).join(",")}`;
}

/**
 * Lock watches (PROTOCOL.md "Lock watches"), from what the watchers were answered:
 * - one event per version of a log: every answer that holds version `v` of log `logId` holds the
 *   same event;
 * - a log never forgets what it told: an answer to `since: { logId, version: v }` under that same
 *   `logId` is never at a version below `v`, and its events are in order, each above `v`;
 * - a watcher following one log from a snapshot never sees an exclusive lock event on a descriptor
 *   the log says is locked, nor a lock event whose descriptor and mode no client asked for before.
 */
export function lockWatch(answers: readonly WatchAnswer[], asked: readonly Asked[]): Violation[] {
  const out: Violation[] = [];
  const versions = new Map<string, { key: string; client: string; at: number }>();
  const askedBy = groupBy(asked, (a) => `${a.namespace}/${a.descriptor}/${a.mode}`);
  for (const a of answers) {
    const { update, since } = a;
    const where = `${a.namespace}: ${a.client}'s lock-events answer at ${a.receivedAt.toFixed(1)} (log ${update.logId})`;
    if (since !== null && since.logId === update.logId && update.version < since.version) {
      out.push({ invariant: "lock-watch", detail: `${where} is at version ${update.version}, below the version ${since.version} the log answered before` });
    }
    if (update.type !== "events") continue;
    let previous = since !== null && since.logId === update.logId ? since.version : -Infinity;
    for (const e of update.events) {
      if (e.version <= previous || e.version > update.version) out.push({ invariant: "lock-watch", detail: `${where}: event version ${e.version} out of order (after ${previous}, answer at ${update.version})` });
      previous = e.version;
      const key = eventKey(e);
      const at = `${a.namespace} ${update.logId} ${e.version}`;
      const first = versions.get(at);
      if (first === undefined) versions.set(at, { key, client: a.client, at: a.receivedAt });
      else if (first.key !== key) out.push({ invariant: "lock-watch", detail: `${where}: version ${e.version} is "${key}", but ${first.client} was told "${first.key}" at ${first.at.toFixed(1)}` });
      if (e.kind !== "lock") continue;
      for (const d of e.descriptors) {
        if (!(askedBy.get(`${a.namespace}/${d.descriptor}/${d.mode}`) ?? []).some((q) => q.sentAt <= a.receivedAt)) {
          out.push({ invariant: "lock-watch", detail: `${where}: version ${e.version} locks ${d.descriptor} ${d.mode}, which no client had asked for` });
        }
      }
    }
  }
  out.push(...followedLogs(answers));
  return out;
}

/** Each watcher's picture of each log it follows: an exclusive lock event on a descriptor locked in it is a second holder. */
function followedLogs(answers: readonly WatchAnswer[]): Violation[] {
  const out: Violation[] = [];
  for (const list of groupBy(answers, (a) => `${a.client} ${a.namespace}`).values()) {
    let logId: string | null = null;
    let version = 0;
    let locked = new Map<string, number>();
    for (const a of [...list].sort((x, y) => x.receivedAt - y.receivedAt)) {
      const u = a.update;
      if (u.type === "snapshot") {
        logId = u.logId;
        version = u.version;
        locked = new Map();
        for (const l of u.locked) locked.set(l.descriptor, (locked.get(l.descriptor) ?? 0) + 1);
        continue;
      }
      // Only an answer that continues this watcher's own picture (its since is where the picture is).
      if (a.since === null || a.since.logId !== logId || a.since.version !== version || u.logId !== logId) continue;
      for (const e of u.events) {
        for (const d of e.descriptors) {
          const n = locked.get(d.descriptor) ?? 0;
          if (e.kind === "unlock") locked.set(d.descriptor, Math.max(0, n - 1));
          else {
            if (d.mode === "exclusive" && n > 0) out.push({ invariant: "lock-watch", detail: `${a.namespace}: ${a.client} was told at ${a.receivedAt.toFixed(1)} of an exclusive lock of ${d.descriptor} (log ${u.logId} version ${e.version}) while its log held it ${n} time(s)` });
            locked.set(d.descriptor, n + 1);
          }
        }
      }
      version = u.version;
    }
  }
  return out;
}
