import fc from "fast-check";
import { LeaseholdError, type LockRequest, type LockSpec } from "@leasehold/protocol";
import { LockEngine } from "../../src/engine/lock-engine.js";
import { PendingLock } from "../../src/engine/pending-lock.js";
import type { NamespaceImage, ReplicationEntry } from "../../src/engine/replication-entries.js";
import type { TokenSource } from "../../src/engine/token-source.js";

/** Predictable tokens whose position can be copied, so a promoted replica mints what its leader would. */
export interface SeqSource extends TokenSource {
  n: number;
}

/** Tokens `t1`, `t2`, … from a counter the test can read and set. */
export function seqSource(): SeqSource {
  const source = { n: 0, next: () => `t${++source.n}` };
  return source;
}

/** A JSON round trip: what crosses the network. */
export function wire<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** One table (leader or replica) on the shared fake clock, recording how its waiters settle. */
export class Node {
  readonly source = seqSource();
  readonly engine: LockEngine;
  /** Settlements as `namespace|serial:outcome`, in order. */
  settled: string[] = [];
  /** Handles of waiters this node's caller knows, by wait serial. */
  readonly handles = new Map<number, PendingLock>();

  constructor(clock: () => number, replica: boolean, leaseMs: number) {
    this.engine = new LockEngine({
      clock,
      leaderId: "leader-1",
      leaseMs,
      replica,
      tokenSource: this.source,
      onSettled: (pending, outcome) => {
        this.settled.push(`${pending.request.namespace.name}|${pending.waitSerial}:${outcome instanceof LeaseholdError ? outcome.code : JSON.stringify(outcome)}`);
      },
    });
  }

  /** Restore every namespace of `images` (a standby joining). */
  restoreAll(images: readonly NamespaceImage[]): void {
    for (const image of images) this.engine.restoreNamespace(image.namespace, wire(image));
  }
}

/** Every namespace's image, in the table's namespace order. */
export function imagesOf(engine: LockEngine): NamespaceImage[] {
  return engine.namespaceNames().map((ns) => engine.exportNamespace(ns));
}

const descriptor = fc.constantFrom("d1", "d2", "d3", "d4");
const spec = fc.oneof(
  descriptor.map((d): LockSpec => ({ descriptor: d, mode: "exclusive" })),
  descriptor.map((d): LockSpec => ({ descriptor: d, mode: "shared" })),
  fc.tuple(descriptor, fc.integer({ min: 1, max: 3 })).map(([d, limit]): LockSpec => ({ descriptor: d, mode: "permit", limit })),
);
const locks = fc.uniqueArray(spec, { minLength: 1, maxLength: 3, selector: (s) => s.descriptor });
/** `wait-for-locks` takes exclusive and shared only. */
const waitLocks = fc.uniqueArray(
  fc.tuple(descriptor, fc.constantFrom("exclusive" as const, "shared" as const)).map(([d, mode]) => ({ descriptor: d, mode })),
  { minLength: 1, maxLength: 3, selector: (s) => s.descriptor },
);
const ns = fc.constantFrom("a", "b");
const rid = fc.option(fc.constantFrom("r1", "r2", "r3"), { nil: undefined });

/** One random operation on a table. */
export const operation = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("lock" as const), ns, locks, timeout: fc.constantFrom(0, 5, 60, 400), amap: fc.boolean(), max: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }), requestId: rid, desc: fc.option(fc.constant("worker"), { nil: undefined }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("wait" as const), ns, locks: waitLocks, timeout: fc.constantFrom(0, 60, 400), requestId: rid }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("unlock" as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("refresh" as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("abandon" as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("revoke" as const), ns, descriptor }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("tick" as const), ms: fc.constantFrom(1, 7, 60, 300, 700) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("txn" as const), ns, count: fc.integer({ min: 1, max: 2 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("lease" as const), ns, name: fc.constantFrom("n1", "n2"), count: fc.integer({ min: 0, max: 2 }), requestId: rid }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("timestamps" as const), ns, count: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("immutable" as const), ns }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("minLeased" as const), ns, name: fc.constantFrom("n1", "n2") }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("resend" as const), pick: fc.nat() }) },
);
export type Operation = typeof operation extends fc.Arbitrary<infer T> ? T : never;

/** The lock request body of a lock operation. */
export function lockBody(op: Extract<Operation, { kind: "lock" }>): LockRequest {
  const body: { -readonly [K in keyof LockRequest]: LockRequest[K] } = { locks: op.locks, acquireTimeoutMs: op.timeout };
  if (op.amap) {
    body.behavior = "as-many-as-possible";
    if (op.max !== undefined) body.max = op.max;
  }
  if (op.requestId !== undefined) body.requestId = op.requestId;
  if (op.desc !== undefined) body.clientDescription = op.desc;
  return body;
}

/** An answer made comparable across tables: a handle becomes its serial, an error its code. */
export function normalize(answer: unknown): unknown {
  if (answer instanceof PendingLock) return { status: "waiting", serial: answer.waitSerial };
  return answer;
}

/** Run `f`, answering its error's code instead of throwing (a refused request is an answer too). */
export function attempt(f: () => unknown): unknown {
  try {
    return normalize(f());
  } catch (err) {
    if (err instanceof LeaseholdError) return { error: err.code };
    throw err;
  }
}

/** The entry feed of a leader into its followers, through JSON. */
export function feedInto(followers: () => readonly Node[]): (namespace: string, entry: ReplicationEntry) => void {
  return (namespace, entry) => {
    const text = JSON.stringify(entry);
    for (const f of followers()) f.engine.applyEntry(namespace, JSON.parse(text) as ReplicationEntry);
  };
}
