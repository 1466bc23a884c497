import type { ReplicaHost } from "./apply-entry.js";
import { carriedFromImage } from "./carried-watch.js";
import { HolderTally, ShapeCheck } from "./replica-checks.js";
import { installToken, installWaiter, queueOn, setLimit } from "./replica-install.js";
import { REPLICATION_FORMAT, type NamespaceImage, type TokenImage, type WaiterImage } from "./replication-entries.js";

/**
 * Install a namespace's image into a table that does not hold the namespace (see
 * `LockEngine.restoreNamespace`). The whole image is checked first (shape, tokens and requestIds
 * unique, holds compatible with each other, every queued waiter in its descriptor's queue exactly
 * once), so a bad image throws `INVALID_ARGUMENT` naming the field and creates nothing.
 */
export function restoreNamespaceImage(host: ReplicaHost, namespace: string, raw: NamespaceImage | unknown, now: number): void {
  const check = new ShapeCheck(namespace);
  if (host.existing(namespace) !== undefined) check.fail("namespace", "is already in this table: an image is restored only into a table that does not hold its namespace");
  const image = check.object(raw, "image");
  if (image.format !== REPLICATION_FORMAT) check.fail("image.format", `must be ${REPLICATION_FORMAT}`);
  if (image.namespace !== namespace) check.fail("image.namespace", `is ${JSON.stringify(image.namespace)}, not the namespace restored`);
  const next = check.integer(image.next, "image.next", 1);
  const lastSerial = check.integer(image.waitSerial, "image.waitSerial");
  const tally = new HolderTally(undefined, check);
  const seenTokens = new Set<string>();
  const seenIds = new Set<string>();
  const claimId = (id: string | undefined, path: string): void => {
    if (id === undefined) return;
    if (seenIds.has(id)) check.fail(path, `repeats requestId ${JSON.stringify(id)}`);
    seenIds.add(id);
  };
  let lastImmutable = 0;
  const tokens = check.array(image.tokens, "image.tokens").map((rawToken, i) => {
    const path = `image.tokens[${i}]`;
    const t = check.token(rawToken, path, next);
    const heldMs = check.integer((rawToken as { heldMs?: unknown }).heldMs, `${path}.heldMs`);
    if (seenTokens.has(t.token)) check.fail(`${path}.token`, "repeats a token");
    seenTokens.add(t.token);
    if (t.kind !== "immutable") claimId(t.requestId, `${path}.requestId`);
    if (t.kind === "lock") t.holds.forEach((h, j) => tally.add(h, `${path}.holds[${j}]`));
    if (t.kind === "immutable") {
      if (t.startTimestamp <= lastImmutable) check.fail(`${path}.startTimestamp`, "must be above the earlier immutable-timestamp locks' (they are listed in grant order)");
      lastImmutable = t.startTimestamp;
    }
    return { t, heldMs } as { t: TokenImage; heldMs: number };
  });
  const bySerial = new Map<number, WaiterImage>();
  const waiters = check.array(image.waiters, "image.waiters").map((rawWaiter, i) => {
    const path = `image.waiters[${i}]`;
    const w = check.waiter(rawWaiter, path, next);
    if (bySerial.has(w.serial)) check.fail(`${path}.serial`, "repeats a serial");
    if (w.serial > lastSerial) check.fail(`${path}.serial`, `must not be above image.waitSerial (${lastSerial})`);
    bySerial.set(w.serial, w);
    claimId(w.requestId, `${path}.requestId`);
    w.holds.forEach((h, j) => tally.add(h, `${path}.holds[${j}]`));
    return w;
  });
  const queued = new Set<number>();
  const queues = check.array(image.queues, "image.queues").map((rawQueue, i) => {
    const q = check.object(rawQueue, `image.queues[${i}]`);
    const descriptor = check.string(q.descriptor, `image.queues[${i}].descriptor`);
    const serials = check.array(q.serials, `image.queues[${i}].serials`).map((s, j) => {
      const serial = check.integer(s, `image.queues[${i}].serials[${j}]`, 1);
      if (bySerial.get(serial)?.queuedOn?.descriptor !== descriptor || queued.has(serial)) {
        check.fail(`image.queues[${i}].serials[${j}]`, `must name a waiter queued on ${descriptor}, once`);
      }
      queued.add(serial);
      return serial;
    });
    return { descriptor, serials };
  });
  const inUse = new Set([...tokens.flatMap(({ t }) => (t.kind === "lock" ? t.holds.map((h) => h.descriptor) : [])), ...waiters.flatMap((w) => w.specs.map((s) => s.descriptor))]);
  const limits = check.array(image.limits, "image.limits").map((rawLimit, i) => {
    const l = check.object(rawLimit, `image.limits[${i}]`);
    const descriptor = check.string(l.descriptor, `image.limits[${i}].descriptor`);
    if (!inUse.has(descriptor)) check.fail(`image.limits[${i}].descriptor`, "is not held, queued on or watched by anything in the image");
    return { descriptor, limit: check.integer(l.limit, `image.limits[${i}].limit`, 1) };
  });
  for (const w of waiters) if (w.queuedOn !== undefined && !queued.has(w.serial)) check.fail("image.queues", `miss waiter ${w.serial}, queued on ${w.queuedOn.descriptor}`);
  const watch = image.watch === undefined ? null : carriedFromImage(check, image.watch, now);

  const ns = host.create(namespace);
  ns.raiseCounter(next);
  ns.carriedWatch = watch;
  host.noteSerial(lastSerial);
  for (const { t, heldMs } of tokens) installToken(host.table, ns, t, now, heldMs);
  for (const w of waiters) {
    installWaiter(host.table, ns, w, now, false);
    host.noteSerial(w.serial);
  }
  for (const { serials } of queues) {
    for (const serial of serials) {
      const w = bySerial.get(serial) as WaiterImage;
      const req = ns.replicaWaiters?.get(serial);
      if (req?.pending != null && w.queuedOn !== undefined) queueOn(ns, req.pending, w.queuedOn);
    }
  }
  for (const { descriptor, limit } of limits) setLimit(ns, descriptor, limit);
}
