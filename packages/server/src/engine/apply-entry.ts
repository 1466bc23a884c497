import type { LockTable } from "./lock-table.js";
import type { LockRequestState } from "./lock-request-state.js";
import type { NamespaceState } from "./namespace-state.js";
import { CarriedWatch, checkWatchEntry } from "./carried-watch.js";
import { HolderTally, ShapeCheck } from "./replica-checks.js";
import { endReplicaWaiter, grantWaiter, installToken, installWaiter, releaseReplicaToken, setLimit, updateWaiter } from "./replica-install.js";
import type { ReplicatedHold, ReplicationEntry } from "./replication-entries.js";

/** What applying entries and restoring images need of the engine. */
export interface ReplicaHost {
  readonly table: LockTable;
  /** The namespace, or undefined while the table has none of that name (nothing is created). */
  existing(name: string): NamespaceState | undefined;
  /** The namespace, created when absent. */
  create(name: string): NamespaceState;
  /** A waiter with this serial was installed: later serials of the table must be above it. */
  noteSerial(serial: number): void;
}

const RELEASE_REASONS = ["unlock", "lapse", "revoke", "unclaimed"];
const END_REASONS = ["timeout", "abandon", "revoke", "free", "unclaimed"];

/**
 * Install one replication entry (see `LockEngine.applyEntry`): checked whole against its shape and
 * the table first, so an entry that is malformed or does not fit throws `INVALID_ARGUMENT` (naming
 * the field) and changes nothing; then installed as the leader decided it.
 */
export function applyReplicationEntry(host: ReplicaHost, namespace: string, raw: ReplicationEntry | unknown, now: number): void {
  const check = new ShapeCheck(namespace);
  const e = check.object(raw, "entry");
  const ns = host.existing(namespace);
  const table = host.table;
  switch (e.type) {
    case "grant": {
      const next = check.integer(e.next, "entry.next", 1);
      const t = check.token(e, "entry", next);
      if (ns?.tokens.has(t.token) === true) check.fail("entry.token", "is already a live token of the namespace");
      if (e.waiter !== undefined) {
        const serial = check.integer(e.waiter, "entry.waiter", 1);
        const req = waiterOf(check, ns, serial, "entry.waiter");
        if (t.kind !== "lock" || req.waitOnly) return check.fail("entry.kind", "must be lock for a grant that ends a lock request's wait");
        if (t.requestId !== req.requestId) check.fail("entry.requestId", `must be the waiter's (${JSON.stringify(req.requestId)})`);
        checkHeldPrefix(check, req, t.holds, "entry.holds");
        const tally = new HolderTally(ns, check);
        t.holds.forEach((h, i) => i >= req.heldCount && tally.add(h, `entry.holds[${i}]`));
        grantWaiter(table, req, t.holds, t.token, now);
        req.namespace.raiseCounter(next);
        req.namespace.carriedWatch?.noteEvent();
        return;
      }
      if (t.kind !== "immutable" && t.requestId !== undefined && ns?.requests.has(t.requestId) === true) {
        check.fail("entry.requestId", "is in use by a live request of the namespace");
      }
      if (t.kind === "lock") {
        const tally = new HolderTally(ns, check);
        t.holds.forEach((h, i) => tally.add(h, `entry.holds[${i}]`));
      }
      if (t.kind === "immutable" && t.startTimestamp <= (ns?.lastImmutableStart ?? 0)) {
        check.fail("entry.startTimestamp", "must be above every earlier immutable-timestamp lock's");
      }
      const target = host.create(namespace);
      installToken(table, target, t, now, 0);
      target.raiseCounter(next);
      target.carriedWatch?.noteEvent();
      return;
    }
    case "release": {
      const token = check.string(e.token, "entry.token");
      if (!RELEASE_REASONS.includes(e.reason as string)) check.fail("entry.reason", `must be one of ${RELEASE_REASONS.join(", ")}`);
      const req = ns?.tokens.get(token);
      if (req === undefined) return check.fail("entry.token", "is not a live token of the namespace");
      releaseReplicaToken(table, req);
      req.namespace.carriedWatch?.noteEvent();
      return;
    }
    case "waiting": {
      const next = check.integer(e.next, "entry.next", 1);
      const w = check.waiter(e, "entry", next);
      const req = ns?.replicaWaiters?.get(w.serial);
      const tally = new HolderTally(ns, check);
      if (req !== undefined) {
        const same = req.requestId === w.requestId && req.allOrNone === w.allOrNone && req.max === w.max && req.waitOnly === w.waitOnly && req.specs?.length === w.specs.length;
        if (!same || req.pending?.watching !== w.watching) check.fail("entry", `changes what waiter ${w.serial} asked for; only its holds, queue place and deadline may change`);
        checkHeldPrefix(check, req, w.holds, "entry.holds");
        w.holds.forEach((h, i) => i >= req.heldCount && tally.add(h, `entry.holds[${i}]`));
        updateWaiter(table, req, w, now);
        req.namespace.raiseCounter(next);
        return;
      }
      if (w.requestId !== undefined && ns?.requests.has(w.requestId) === true) check.fail("entry.requestId", "is in use by a live request of the namespace");
      w.holds.forEach((h, i) => tally.add(h, `entry.holds[${i}]`));
      const target = host.create(namespace);
      installWaiter(table, target, w, now, true);
      host.noteSerial(w.serial);
      target.raiseCounter(next);
      return;
    }
    case "waiter-ended": {
      const serial = check.integer(e.serial, "entry.serial", 1);
      if (!END_REASONS.includes(e.reason as string)) check.fail("entry.reason", `must be one of ${END_REASONS.join(", ")}`);
      endReplicaWaiter(table, waiterOf(check, ns, serial, "entry.serial"));
      return;
    }
    case "limit": {
      const descriptor = check.string(e.descriptor, "entry.descriptor");
      const limit = check.integer(e.limit, "entry.limit", 1);
      setLimit(host.create(namespace), descriptor, limit);
      return;
    }
    case "counter": {
      const next = check.integer(e.next, "entry.next", 1);
      host.create(namespace).raiseCounter(next);
      return;
    }
    case "watch": {
      const w = checkWatchEntry(check, e);
      const target = host.create(namespace);
      target.carriedWatch ??= new CarriedWatch(w.logId, w.version, new Map());
      target.carriedWatch.register(w.logId, w.version, w.prefixes, w.ttlMs, now);
      return;
    }
    default:
      check.fail("entry.type", "must be one of grant, release, waiting, waiter-ended, limit, counter, watch");
  }
}

/** The waiting request with `serial`, or a misfit error. */
function waiterOf(check: ShapeCheck, ns: NamespaceState | undefined, serial: number, path: string): LockRequestState {
  const req = ns?.replicaWaiters?.get(serial);
  if (req === undefined) return check.fail(path, `names no waiting request (serial ${serial})`);
  return req;
}

/** The holds a waiter already has must open the list, unchanged. */
function checkHeldPrefix(check: ShapeCheck, req: LockRequestState, holds: readonly ReplicatedHold[], path: string): void {
  if (holds.length < req.heldCount) check.fail(path, `drops holds the waiter has (${req.heldCount})`);
  for (let i = 0; i < req.heldCount; i++) {
    const hold = holds[i] as ReplicatedHold;
    if (hold.descriptor !== req.heldAt(i).key || hold.fencingToken !== req.fencingAt(i)) check.fail(`${path}[${i}]`, "differs from the hold the waiter has");
  }
}
