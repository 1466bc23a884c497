import { shardOf, type ClusterResponse } from "@leasehold/protocol";
import type { LeaderTerms } from "./leader-terms.js";
import { serverTarget, type ServerTarget } from "./server-target.js";

/** Options of {@link ShardMap}; the HTTP transport supplies them. */
export interface ShardMapOptions {
  /** The servers the client was given (`baseUrls`); asked first, in turn, for the map. */
  readonly seeds: readonly ServerTarget[];
  /** `GET /v1/cluster` at one server, checked against the protocol; rejects on any failure. */
  readonly fetch: (target: ServerTarget) => Promise<ClusterResponse>;
  /** Where the leader ids the map shows are noted (a change voids the earlier term's tokens). */
  readonly terms: LeaderTerms;
  /** Monotonic ms. */
  readonly now: () => number;
  /**
   * Shortest gap between two fetches, in ms. Default 100: failures of many concurrent calls
   * arrive spread over a few ms, and without the gap each one that came after the previous fetch
   * ended would start another, while the cluster's view changes on the scale of its leader lease.
   */
  readonly minIntervalMs?: number | undefined;
}

/** Most namespaces whose shard is remembered (a client usually uses one). */
const MAX_CACHED_NAMESPACES = 4_096;

/**
 * The client's view of who leads which shard, from `GET /v1/cluster`, completed by the
 * `leaderUrl` of `421` answers. Fetched lazily and refreshed on demand, single-flight: however
 * many calls fail at once, one fetch is in flight and they all wait for that one. A map that
 * could not be fetched from any server leaves the last one in place (or none: calls then go to
 * the servers in turn and follow their 421s).
 *
 * Each shard is kept at the newest view of it, by `epoch`: an answer whose entry for a shard has
 * a lower epoch than the one known (a member cut off from PostgreSQL, answering from its last
 * view) leaves that shard as it is, and so does an entry of the same epoch that names no leader
 * (its server does not know, or no longer trusts, its view).
 */
export class ShardMap {
  readonly #options: ShardMapOptions;
  readonly #minIntervalMs: number;
  /** Every server known by URL key: the seeds, then each leader URL learned. */
  readonly #servers = new Map<string, ServerTarget>();
  /** The values of `#servers`, in order, kept as a list so routing reads it without copying. */
  readonly #serverList: ServerTarget[] = [];
  #shards = 0;
  #leaders: (ServerTarget | undefined)[] = [];
  /**
   * Per shard, the epoch of the view `#leaders` holds. Half a step above a view's epoch once that
   * view's leader answered `421` for the shard: the view is known to be out of date, so only a
   * strictly newer one (a whole epoch more) replaces the leader the 421 named.
   */
  #epochs: number[] = [];
  #byNamespace = new Map<string, number>();
  #inFlight: Promise<void> | undefined;
  #doneAt = -Infinity;
  /** Where the next fetch starts: the server that answered the last one. */
  #askFirst = 0;
  /** Fetches started, for tests and stats. */
  fetches = 0;

  constructor(options: ShardMapOptions) {
    this.#options = options;
    this.#minIntervalMs = options.minIntervalMs ?? 100;
    for (const seed of options.seeds) this.#add(seed);
  }

  /** True once a map was fetched. */
  get loaded(): boolean {
    return this.#shards > 0;
  }

  /** The shard of `namespace`, or undefined before the first map. */
  shardOf(namespace: string): number | undefined {
    if (this.#shards === 0) return undefined;
    let shard = this.#byNamespace.get(namespace);
    if (shard === undefined) {
      shard = shardOf(namespace, this.#shards);
      if (this.#byNamespace.size >= MAX_CACHED_NAMESPACES) this.#byNamespace.clear();
      this.#byNamespace.set(namespace, shard);
    }
    return shard;
  }

  /** The leader of `shard` as last known, if any. */
  leader(shard: number): ServerTarget | undefined {
    return this.#leaders[shard];
  }

  /**
   * A `421` from `from` named `target` as the leader of `shard`. A 421 carries no epoch, so it
   * becomes the shard's leader only when the map knows none, or when `from` is the map's own
   * leader of the shard (its view is then out of date); until a newer view, calls go there. A 421
   * of another server (perhaps one cut off from PostgreSQL) never replaces a leader the map has
   * from a view: the call that met it follows it, the others do not.
   */
  hint(shard: number, from: ServerTarget, target: ServerTarget): void {
    if (shard >= this.#shards) return;
    const known = this.#leaders[shard];
    if (known === from) this.#epochs[shard] = Math.floor(this.#epochs[shard] ?? 0) + 0.5;
    else if (known !== undefined) return;
    this.#leaders[shard] = target;
  }

  /** Every server known: the seeds first, then the leaders learned. */
  servers(): readonly ServerTarget[] {
    return this.#serverList;
  }

  #add(target: ServerTarget): void {
    this.#servers.set(target.key, target);
    this.#serverList.push(target);
  }

  /** The known target for `url` (the same object for the same server), or undefined for a URL that is not http(s). */
  target(url: string): ServerTarget | undefined {
    let target: ServerTarget;
    try {
      target = serverTarget(url);
    } catch {
      return undefined;
    }
    const known = this.#servers.get(target.key);
    if (known !== undefined) return known;
    this.#add(target);
    return target;
  }

  /**
   * The first map: starts its fetch if none ran yet, and waits for the fetch in flight. After a
   * fetch that nobody could serve, calls go on without a map (to the members in turn) and ask
   * again at most every `minIntervalMs`.
   */
  ready(): Promise<void> {
    return this.#shards > 0 ? Promise.resolve() : this.refresh();
  }

  /**
   * Fetch the map again, unless a fetch is in flight (its promise is returned) or, unless
   * `stale`, one ended less than `minIntervalMs` ago. `stale` says the caller has news the map
   * cannot have had (a `421` naming another leader than the map's): it still joins a fetch in
   * flight, but is not held back by the interval. Never rejects: a map nobody could serve leaves
   * the old one.
   */
  refresh(stale = false): Promise<void> {
    if (this.#inFlight !== undefined) return this.#inFlight;
    if (!stale && this.#options.now() - this.#doneAt < this.#minIntervalMs) return Promise.resolve();
    return this.#start();
  }

  #start(): Promise<void> {
    this.fetches++;
    this.#inFlight = this.#load().finally(() => {
      this.#inFlight = undefined;
      this.#doneAt = this.#options.now();
    });
    return this.#inFlight;
  }

  async #load(): Promise<void> {
    const servers = [...this.#serverList];
    for (let i = 0; i < servers.length; i++) {
      const at = (this.#askFirst + i) % servers.length;
      try {
        this.#apply(await this.#options.fetch(servers[at]!));
        this.#askFirst = at;
        return;
      } catch {
        // This server is down or has no cluster route (an older server): ask the next one.
      }
    }
  }

  #apply(answer: ClusterResponse): void {
    if (answer.shards !== this.#shards) {
      this.#shards = answer.shards;
      this.#byNamespace = new Map();
      this.#leaders = new Array<ServerTarget | undefined>(answer.shards).fill(undefined);
      this.#epochs = new Array<number>(answer.shards).fill(-1);
      this.#options.terms.resetShards();
    }
    for (const { shard, leaderUrl, leaderId, epoch } of answer.leaders) {
      if (shard >= answer.shards) continue;
      const known = this.#epochs[shard]!;
      // Older than what is known: a stale member's view. Same epoch and no leader: nothing new.
      if (epoch < known || (epoch === known && leaderUrl === null)) continue;
      this.#epochs[shard] = epoch;
      this.#leaders[shard] = leaderUrl === null ? undefined : this.target(leaderUrl);
      if (leaderId !== null) this.#options.terms.observe(shard, leaderId, epoch);
    }
  }
}
