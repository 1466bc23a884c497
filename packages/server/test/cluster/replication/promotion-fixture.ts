import { LeaseholdError, type LockResponse } from "@leasehold/protocol";
import pino from "pino";
import { ClusterMetrics } from "../../../src/cluster/cluster-metrics.js";
import type { Coordinator, LoadedBound, ShardLease } from "../../../src/cluster/coordinator.js";
import { gateMargin } from "../../../src/cluster/margins.js";
import { ReplicaPromoter } from "../../../src/cluster/replication/promote-replica.js";
import { ReplicaStore, type ReplicaSink } from "../../../src/cluster/replication/replica-store.js";
import type { StreamIdentity } from "../../../src/cluster/replication/replication-wire.js";
import type { ShardTerm } from "../../../src/cluster/shard-term.js";
import type { TestBreak } from "../../../src/cluster/test-breaks.js";
import { TermStarter } from "../../../src/cluster/term-starter.js";
import { InMemoryLockService } from "../../../src/service/in-memory-lock-service.js";

/**
 * A standby's promotion with the real classes (ReplicaStore, ReplicaPromoter, TermStarter,
 * ShardTerm, the engine) around a fake coordinator, on a clock the test moves: the standby "b"
 * (incarnation b-1) holds a replica of shard 0 as leader "a" led it at epoch 5 (leaderId L5),
 * with the lock `held` granted there in namespace `ns`.
 */

/** A sink whose snapshot is the namespace images it was restored with. */
export class ImageSink implements ReplicaSink {
  images: Record<string, unknown> = {};
  disposed = false;
  restore(snapshot: unknown): void {
    this.images = { ...(snapshot as Record<string, unknown>) };
  }
  apply(): void {}
  snapshot(): unknown {
    return { namespaces: this.images };
  }
  namespaceNames(): string[] {
    return Object.keys(this.images);
  }
  dispose(): void {
    this.disposed = true;
  }
}

export const stream: StreamIdentity = { shard: 0, epoch: 5, leaderId: "L5", leaderIncarnation: "a-1", standbyIncarnation: "b-1", streamId: "s1" };

/** Shard 0's row as the dead leader left it: expired, b its in-sync standby. */
export const expiredRow: ShardLease = {
  shard: 0,
  holder: "a",
  url: "http://a",
  leaderId: "L5",
  incarnation: "a-1",
  epoch: 5,
  version: 40,
  expired: true,
  transitions: 5,
  standbyId: "b",
  standbyIncarnation: "b-1",
  inSync: true,
};

/** The lock the old leader granted, as its image and its holder's answer. */
export async function grantedImage(leaderLeaseMs: number): Promise<{ images: Record<string, unknown>; token: string; validForMs: number }> {
  const source = new InMemoryLockService({ leaderId: "L5", leaseMs: leaderLeaseMs });
  const got = (await source.lock("ns", { locks: [{ descriptor: "held", mode: "exclusive" }] })) as LockResponse;
  if (got.status !== "acquired") throw new Error("the source did not grant");
  const images = { ns: source.exportNamespace("ns") };
  await source.close();
  return { images, token: got.token, validForMs: got.lease.validForMs };
}

/** What {@link promotionBed} is made with. */
export interface PromotionBedOptions {
  /** The standby's own `--lease-ms`. */
  readonly leaseMs: number;
  readonly leaderLeaseMs: number;
  /** The coordinator's statements this bed does not answer itself (acquire, adoptHandOver, ...). */
  readonly coordinator: Partial<Coordinator>;
  readonly breaks?: readonly TestBreak[];
  /** A term of shard 0 this process still leads from an earlier epoch (its row moved on), ended by `onFailed`. */
  readonly staleTerm?: { readonly shard: number; readonly epoch: number; isEnded: boolean } | undefined;
  /** True when the member has begun to stop (claims landing then start nothing). Default false. */
  readonly stopping?: boolean | undefined;
  /** The standby's sink, on the bed's clock. Default an {@link ImageSink} restored with `images` as they are. */
  readonly sink?: ((clock: () => number) => ReplicaSink) | undefined;
}

/** The standby "b" with its replica, a starter, and the terms it started. */
export function promotionBed(images: Record<string, unknown>, options: PromotionBedOptions) {
  let now = 1_000_000;
  const wallBase = 1_700_000_000_000;
  const logger = pino({ level: "silent" });
  const breaks = new Set(options.breaks ?? []);
  const clock = (): number => now;
  const store = new ReplicaStore({ incarnation: "b-1", shards: () => 1, rowEpoch: () => null, createSink: () => options.sink?.(clock) ?? new ImageSink() });
  store.receive({ kind: "snapshot", stream, seq: 1, snapshot: images });
  const sink = store.get(0)!.sink as ImageSink;
  const promoter = new ReplicaPromoter({ store, serverId: "b", incarnation: "b-1", logger, dropReplicaOnUnknown: breaks.has("drop-replica-on-unknown") });
  const loadBounds = async (_term: unknown, namespaces: readonly string[], block: number): Promise<LoadedBound[]> => namespaces.map((namespace) => ({ namespace, floor: 0, immutable: null, to: block }));
  const coordinator = { loadBounds, release: async () => undefined, ...options.coordinator } as unknown as Coordinator;
  const terms: ShardTerm[] = [];
  const warnings: string[] = [];
  const failed: { epoch: number; reason: string }[] = [];
  const starter = new TermStarter({
    options: { coordinator, serverId: "b", url: "http://b", leaderLeaseMs: options.leaderLeaseMs, leaseMs: options.leaseMs, reserveBlock: 1_000, logger, metrics: new ClusterMetrics(() => terms.length), breaks },
    clock: () => now,
    wallClock: () => wallBase + now,
    margin: gateMargin(options.leaderLeaseMs),
    incarnation: "b-1",
    url: () => "http://b",
    retryAfterMs: () => 1_000,
    stopping: () => options.stopping === true,
    promoter: () => promoter,
    led: () => terms.find((t) => !t.isEnded) ?? (options.staleTerm?.isEnded === false ? (options.staleTerm as unknown as ShardTerm) : null),
    onFailed: (term, reason) => {
      failed.push({ epoch: term.epoch, reason });
      if (term === (options.staleTerm as unknown)) options.staleTerm!.isEnded = true;
    },
    onStarted: (term) => terms.push(term),
    renewSoon: () => undefined,
    reread: () => undefined,
    warn: (_err, msg) => warnings.push(msg),
  });
  return {
    store,
    sink,
    promoter,
    starter,
    terms,
    warnings,
    failed,
    get now(): number {
      return now;
    },
    /** Move the clock on by `ms`, keeping every term's gate open (as its renewals would). */
    advance(ms: number): void {
      now += ms;
      for (const term of terms) term.extendGate({ monotonic: now + options.leaderLeaseMs, wall: wallBase + now + options.leaderLeaseMs });
    },
    /** Another client's lock on the held descriptor, answered at once. */
    contend(term: ShardTerm): LockResponse {
      return term.beginLock("ns", { locks: [{ descriptor: "held", mode: "exclusive" }], acquireTimeoutMs: 0 }) as LockResponse;
    },
    end(): void {
      for (const term of terms) term.end(new LeaseholdError("UNAVAILABLE", "test over"));
    },
  };
}

/**
 * Shard 0's row as a balance hand-over to "b" leaves it: epoch 6, the replica's leaderId, the
 * former leader "a" its in-sync standby (kept named until the taker moves its standby).
 */
export const handedRow: ShardLease = {
  shard: 0,
  holder: "b",
  url: "http://b",
  leaderId: "L5",
  incarnation: "b-1",
  epoch: 6,
  version: 41,
  expired: false,
  transitions: 6,
  standbyId: "a",
  standbyIncarnation: "a-1",
  inSync: true,
};
