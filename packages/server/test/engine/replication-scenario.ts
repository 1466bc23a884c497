import { expect } from "vitest";
import type { LockRequest, TimestampLeaseRequest, WaitForLocksRequest } from "@leasehold/protocol";
import { HELD, WAITING } from "../../src/engine/lock-request-state.js";
import type { NamespaceImage, ReplicationEntry } from "../../src/engine/replication-entries.js";
import { Node, attempt, feedInto, imagesOf, lockBody, wire, type Operation } from "./replication-fixture.js";

/*
 * The replication property (issue 21): a leader runs random operations while its change feed
 * drives a replica from the start and, from a random moment on, a second one that joined by an
 * image; at the end a third is restored from an image. All three must then show the leader's
 * table exactly; promoted, they must answer everything the leader answers, the same way.
 */

const NAMESPACES = ["a", "b"] as const;
const LEASE_MS = 1000;

/** A concrete action: the same on every table (tokens and serials chosen from the leader's state). */
type Action =
  | { kind: "lock"; ns: string; body: LockRequest }
  | { kind: "wait"; ns: string; body: WaitForLocksRequest }
  | { kind: "unlock" | "refresh"; ns: string; tokens: string[] }
  | { kind: "abandon"; serial: number }
  | { kind: "revoke"; ns: string; descriptor: string }
  | { kind: "tick"; ms: number }
  | { kind: "txn" | "timestamps"; ns: string; count: number }
  | { kind: "lease"; ns: string; body: TimestampLeaseRequest }
  | { kind: "immutable"; ns: string }
  | { kind: "minLeased"; ns: string; name: string };

/** Ways to break replication on purpose (negative controls): the property must then fail. */
export interface Tampering {
  readonly image?: (image: NamespaceImage) => NamespaceImage;
  readonly entry?: (entry: ReplicationEntry) => ReplicationEntry | null;
}

/** The re-sent request of a waiter of an image (the same identity, timeout 0: the deadline stays). */
function resendOf(ns: string, w: NamespaceImage["waiters"][number]): Action {
  if (w.waitOnly) return { kind: "wait", ns, body: { locks: w.specs.map((s) => ({ descriptor: s.descriptor, mode: s.mode === "shared" ? "shared" : "exclusive" })), acquireTimeoutMs: 0, requestId: w.requestId as string } };
  const body: { -readonly [K in keyof LockRequest]: LockRequest[K] } = { locks: [...w.specs], acquireTimeoutMs: 0, requestId: w.requestId as string };
  if (!w.allOrNone) {
    body.behavior = "as-many-as-possible";
    body.max = w.max;
  }
  return { kind: "lock", ns, body };
}

/** Choose the concrete action of `op` from the leader's current state. */
function resolve(op: Operation, leader: Node, everyone: readonly Node[]): Action {
  const images = NAMESPACES.map((ns) => leader.engine.exportNamespace(ns));
  const tokens = images.flatMap((image) => image.tokens.map((t) => ({ ns: image.namespace, token: t.token })));
  switch (op.kind) {
    case "lock":
      return { kind: "lock", ns: op.ns, body: lockBody(op) };
    case "wait":
      return { kind: "wait", ns: op.ns, body: op.requestId === undefined ? { locks: op.locks, acquireTimeoutMs: op.timeout } : { locks: op.locks, acquireTimeoutMs: op.timeout, requestId: op.requestId } };
    case "unlock":
    case "refresh": {
      const t = tokens[op.pick % (tokens.length + 1)];
      return t === undefined ? { kind: op.kind, ns: "a", tokens: ["t-never"] } : { kind: op.kind, ns: t.ns, tokens: [t.token] };
    }
    case "abandon": {
      const serials = images.flatMap((image) => image.waiters.map((w) => w.serial)).filter((s) => everyone.every((n) => n.handles.has(s)));
      return serials.length === 0 ? { kind: "tick", ms: 0 } : { kind: "abandon", serial: serials[op.pick % serials.length] as number };
    }
    case "resend": {
      const waiters = images.flatMap((image) => image.waiters.filter((w) => w.requestId !== undefined).map((w) => resendOf(image.namespace, w)));
      return waiters[op.pick % Math.max(1, waiters.length)] ?? { kind: "tick", ms: 0 };
    }
    case "lease":
      return { kind: "lease", ns: op.ns, body: op.requestId === undefined ? { name: op.name, count: op.count } : { name: op.name, count: op.count, requestId: op.requestId } };
    default:
      return op;
  }
}

/** Perform an action on one table; answers what it answered, comparable across tables. */
function perform(node: Node, action: Action): unknown {
  const e = node.engine;
  return attempt(() => {
    switch (action.kind) {
      case "lock":
      case "wait": {
        const answer = action.kind === "lock" ? e.lock(action.ns, wire(action.body)) : e.waitForLocks(action.ns, wire(action.body));
        if (answer.status === "waiting") node.handles.set(answer.waitSerial, answer);
        return answer;
      }
      case "unlock":
        return e.unlock(action.ns, { tokens: action.tokens });
      case "refresh":
        return e.refresh(action.ns, { tokens: action.tokens });
      case "abandon": {
        const handle = node.handles.get(action.serial);
        return handle === undefined ? "no handle" : e.abandon(handle);
      }
      case "revoke":
        return e.revoke(action.ns, { descriptors: [action.descriptor], reason: "test" });
      case "txn":
        return e.startTransactions(action.ns, { count: action.count });
      case "timestamps":
        return e.timestamps(action.ns, { count: action.count });
      case "lease":
        return e.acquireTimestampLease(action.ns, wire(action.body));
      case "immutable":
        return e.immutableTimestamp(action.ns);
      case "minLeased":
        return e.minLeasedTimestamp(action.ns, action.name);
      case "tick":
        return null;
    }
  });
}

/** `value` without its `leaseLeftMs` fields (refreshes are not replicated, so before a promotion leases differ). */
function withoutLeases(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (key, v: unknown) => (key === "leaseLeftMs" ? undefined : v)));
}

/** Every table must show what the leader shows (leases too, once promoted: all restarted at once). */
function expectSame(leader: Node, others: readonly Node[], label: string, leasesToo = true): void {
  leader.engine.advance();
  for (const ns of NAMESPACES) {
    const views = (n: Node) => ({
      image: n.engine.exportNamespace(ns),
      snapshot: n.engine.snapshot(ns),
      descriptors: n.engine.inspect(ns, { view: "descriptors", contended: false, limit: 1000 }),
      watchers: n.engine.inspect(ns, { view: "watchers", contended: false, limit: 1000 }),
      immutable: n.engine.inspect(ns, { view: "immutable", contended: false, limit: 1000 }),
      floors: [n.engine.immutableFloor(ns) ?? 1, n.engine.leaseFloor(ns)],
    });
    const seen = (n: Node) => (leasesToo ? views(n) : withoutLeases(views(n)));
    const want = seen(leader);
    others.forEach((n, i) => expect(seen(n), `${label}: table ${i + 1}, namespace ${ns}`).toEqual(want));
  }
  const gauges = (n: Node) => {
    const m = n.engine.metrics();
    return [m.heldLocks, m.heldTokens, m.waitingRequests];
  };
  others.forEach((n, i) => expect(gauges(n), `${label}: gauges of table ${i + 1}`).toEqual(gauges(leader)));
}

/**
 * Run `before` on a leader with three followers (fed from the start; joined by an image at step
 * `joinAt` and fed from then on; restored from an image at the end), check they match, promote
 * them (claiming the carried waiters `claim` selects), run `after` on all four, and check every
 * answer, every settlement and the tables after each step.
 */
export function runScenario(before: readonly Operation[], after: readonly Operation[], joinAt: number, claim: (serial: number) => boolean, tamper: Tampering = {}): void {
  let now = 1000;
  const clock = () => now;
  const leader = new Node(clock, false, LEASE_MS);
  const fed = new Node(clock, true, LEASE_MS);
  let joined: Node | null = null;
  const feed = feedInto(() => (joined === null ? [fed] : [fed, joined]));
  leader.engine.setReplicationSink((ns, entry) => {
    const e = tamper.entry === undefined ? entry : tamper.entry(entry);
    if (e !== null) feed(ns, e);
  });
  const tick = (nodes: readonly Node[], ms: number) => {
    now += ms;
    for (const n of nodes) n.engine.advance();
  };
  before.forEach((op, i) => {
    if (i === joinAt) {
      joined = new Node(clock, true, LEASE_MS);
      joined.restoreAll(imagesOf(leader.engine));
    }
    const action = resolve(op, leader, [leader]);
    if (action.kind === "tick") tick([leader], action.ms);
    else perform(leader, action);
  });
  joined ??= new Node(clock, true, LEASE_MS);
  if (joinAt >= before.length) joined.restoreAll(imagesOf(leader.engine));
  const restored = new Node(clock, true, LEASE_MS);
  leader.engine.advance();
  restored.restoreAll(imagesOf(leader.engine).map((image) => (tamper.image === undefined ? image : tamper.image(image))));
  const replicas = [fed, joined, restored];
  expectSame(leader, replicas, "before promotion", false);

  // Promotion: the leader's leases restart as the replicas' do, so time means the same on all four.
  for (const image of imagesOf(leader.engine)) leader.engine.refresh(image.namespace, { tokens: image.tokens.map((t) => t.token) });
  leader.engine.setReplicationSink(null);
  const carried = imagesOf(leader.engine).flatMap((image) => image.waiters.map((w) => ({ ns: image.namespace, w })));
  let until = Infinity;
  for (const r of replicas) {
    r.source.n = leader.source.n;
    until = r.engine.promote({ claimWindowMs: 200 }).claimUntil;
  }
  const everyone = [leader, ...replicas];
  for (const n of everyone) n.settled = [];
  expectSame(leader, replicas, "promoted");
  const unclaimed = new Map<number, { ns: string; requestId: string | undefined }>();
  for (const { ns, w } of carried) {
    if (w.requestId !== undefined && claim(w.serial)) {
      const action = resendOf(ns, w);
      const answers = everyone.map((n) => perform(n, action));
      answers.forEach((a, i) => expect(a, `claim of ${w.serial} on table ${i}`).toEqual(answers[0]));
    } else {
      unclaimed.set(w.serial, { ns, requestId: w.requestId });
    }
  }
  expectSame(leader, replicas, "claimed");

  /** The leader's side of the end of the claim window: what the replicas drop, it abandons or unlocks. */
  const dropOnLeader = () => {
    for (const serial of [...unclaimed.keys()].sort((x, y) => x - y)) {
      const req = leader.handles.get(serial)?.request;
      if (req?.status === WAITING) leader.engine.abandon(req.pending!);
      else if (req?.status === HELD) leader.engine.unlock(req.namespace.name, { tokens: [req.token] });
    }
    unclaimed.clear();
  };
  after.forEach((op, step) => {
    const action = resolve(op, leader, everyone);
    if (action.kind === "tick") {
      if (now < until && now + action.ms >= until) {
        const rest = now + action.ms - until;
        tick(everyone, until - now);
        dropOnLeader();
        tick(everyone, rest);
      } else {
        tick(everyone, action.ms);
      }
    } else {
      // A re-send of a carried request's id claims it on the replicas (when not refused).
      const rid = action.kind === "lock" || action.kind === "wait" ? action.body.requestId : undefined;
      let claimed: number | undefined;
      if (rid !== undefined && (action.kind === "lock" || action.kind === "wait")) {
        const live = leader.engine.liveRequest(action.ns, rid);
        for (const [serial, c] of unclaimed) {
          const handle = leader.handles.get(serial);
          if (c.ns === action.ns && c.requestId === rid && live !== undefined && (live === handle || live === handle?.request.token)) claimed = serial;
        }
      }
      const answers = everyone.map((n) => perform(n, action));
      answers.forEach((a, i) => expect(a, `after promotion, step ${step} (${action.kind}) on table ${i}`).toEqual(answers[0]));
      if (claimed !== undefined && !(typeof answers[0] === "object" && answers[0] !== null && "error" in answers[0])) unclaimed.delete(claimed);
    }
    expectSame(leader, replicas, `after promotion, step ${step} (${action.kind})`);
  });
  if (now < until) {
    tick(everyone, until - now);
    dropOnLeader();
    expectSame(leader, replicas, "claim window over");
  }
  // Per namespace in order (namespaces are independent; their interleaving may differ).
  const byNamespace = (n: Node) => [...n.settled].sort((x, y) => (x.slice(0, 1) < y.slice(0, 1) ? -1 : x.slice(0, 1) > y.slice(0, 1) ? 1 : 0));
  for (const r of replicas) expect(byNamespace(r), "settlements after promotion").toEqual(byNamespace(leader));
}
