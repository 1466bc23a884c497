import { DEFAULT_SHARDS, type Coordinator } from "../coordinator.js";
import type { MemoryStore } from "./memory-store.js";

/**
 * The path between one member and the in-memory database: it decides when a statement reaches the
 * store and whether its answer comes back, and when (if ever) a `NOTIFY` reaches the member. A
 * simulator delays, reorders, drops and fails them; the default link delivers everything at once.
 */
export interface StatementLink {
  /**
   * Run statement `name`, whose effect on the store is `apply` (atomic): the promise answers what
   * `apply` answered, or rejects (outcome unknown: `apply` may or may not have run).
   */
  run<R>(name: string, apply: () => R): Promise<R>;
  /** A `NOTIFY` for this member: call `deliver` when (if ever) it arrives. */
  notify(deliver: () => void): void;
}

/** The link of a member with a perfect network: every statement runs in the next microtask, every NOTIFY arrives. */
export const directLink: StatementLink = {
  run: (_name, apply) => Promise.resolve().then(apply),
  notify: (deliver) => queueMicrotask(deliver),
};

/** Options of {@link createMemoryCoordinator}. */
export interface MemoryCoordinatorOptions {
  readonly store: MemoryStore;
  /** Default: {@link directLink}. */
  readonly link?: StatementLink | undefined;
  /** TEST ONLY (`epoch-fence` break): bound writes fenced by a live row at any epoch. Default false. */
  readonly unfencedBoundExtensions?: boolean | undefined;
}

/** A member's coordinator over an in-memory store, with a way to break its `LISTEN` connection. */
export interface MemoryCoordinator extends Coordinator {
  /** The `LISTEN` connection broke: the watcher hears `onLost` and no more notifications until it watches again. */
  loseListener(err?: Error): void;
}

/**
 * A {@link Coordinator} for one member over a {@link MemoryStore} (the cluster's database in
 * memory, for the simulator and for tests that need no PostgreSQL): each method is the statement
 * the PostgreSQL coordinator runs, sent over the member's {@link StatementLink}.
 */
export function createMemoryCoordinator(options: MemoryCoordinatorOptions): MemoryCoordinator {
  const { store } = options;
  const link = options.link ?? directLink;
  const unfenced = options.unfencedBoundExtensions === true;
  let watching: { readonly off: () => void; readonly onLost: (err: Error) => void } | null = null;
  let closed = false;
  const run = <R>(name: string, apply: () => R): Promise<R> => (closed ? Promise.reject(new Error("the coordinator is closed")) : link.run(name, apply));
  const stopWatching = (): void => {
    watching?.off();
    watching = null;
  };
  return {
    start: (shards) => run("start", () => store.start(shards, DEFAULT_SHARDS)),
    heartbeat: (member, withinMs) => run("heartbeat", () => store.heartbeat(member, withinMs)),
    leave: (member) => run("leave", () => store.leave(member)),
    readMembers: (withinMs, limit) => run("read-members", () => store.readMembers(withinMs, limit)),
    readLeases: () => run("read-leases", () => store.readLeases()),
    acquire: (shard, seen, claim) => run("acquire", () => store.acquire(shard, seen, claim)),
    renew: (serverId, terms, leaderLeaseMs) => run("renew", () => store.renew(serverId, terms, leaderLeaseMs)),
    settleLeaseWait: (term, validForMs) => run("settle-lease-wait", () => store.settleLeaseWait(term, validForMs)),
    release: (serverId, terms) => run("release", () => store.release(serverId, terms)),
    readBound: (namespace) => run("read-bound", () => store.readBound(namespace)),
    extendBound: (namespace, term, from, to, immutable) => run("extend-bound", () => store.extendBound(namespace, term, from, to, immutable, unfenced)),
    loadBounds: (term, namespaces, block) => run("load-bounds", () => store.loadBounds(term, namespaces, block, unfenced)),
    recordImmutable: (entries) => run("record-immutable", () => store.recordImmutable(entries)),
    importBound: (namespace, bound, shard) => run("import-bound", () => store.importBound(namespace, bound, shard)),
    readStandbyCandidates: (withinMs) => run("read-standby-candidates", () => store.readStandbyCandidates(withinMs)),
    readClusterKey: () => run("read-cluster-key", () => store.readClusterKey()),
    nameStandby: (term, standby, round) => run("name-standby", () => store.nameStandby(term, standby, round)),
    setInSync: (term, incarnation, inSync, round) => run("set-in-sync", () => store.setInSync(term, incarnation, inSync, round)),
    moveStandby: (term, from, to, round) => run("move-standby", () => store.moveStandby(term, from, to, round)),
    handOver: (term, standby, leaderLeaseMs, formerAsStandby, round) => run("hand-over", () => store.handOver(term, standby, leaderLeaseMs, formerAsStandby, round)),
    adoptHandOver: (shard, epoch, claim, bounds, clearStandby) => run("adopt-hand-over", () => store.adoptHandOver(shard, epoch, claim, bounds, clearStandby)),
    async watch(listener, onLost) {
      await run("listen", () => undefined);
      stopWatching();
      const off = store.onRelease((shard) => link.notify(() => {
        if (watching?.off === off) listener(shard);
      }));
      watching = { off, onLost };
    },
    loseListener(err = new Error("the LISTEN connection ended")) {
      const lost = watching;
      stopWatching();
      lost?.onLost(err);
    },
    async close() {
      closed = true;
      stopWatching();
    },
  };
}
