import type { Coordinator } from "../coordinator.js";

/**
 * This member's copy of the cluster key: empty until it joined, then the key PostgreSQL holds
 * (created with the schema). Server-to-server requests are refused until it is loaded.
 */
export class ClusterKeyHolder {
  private loaded: Buffer | null = null;

  /** The key, or `null` before this member joined. */
  get key(): Buffer | null {
    return this.loaded;
  }

  /** Keep `key` (read from the coordinator at join). */
  set(key: Buffer): void {
    this.loaded = key;
  }
}

/**
 * `coordinator` whose `start` (the join: tables created if missing, the shard count checked) also
 * loads the cluster key into `holder`, so every member holds it from the moment it joined, on the
 * join's own retry and backoff. The other methods are the coordinator's own.
 */
export function loadingClusterKey(coordinator: Coordinator, holder: ClusterKeyHolder): Coordinator {
  const start = async (shards?: number): Promise<number> => {
    const count = await coordinator.start(shards);
    holder.set(await coordinator.readClusterKey());
    return count;
  };
  // A proxy rather than a spread: a coordinator given as a class instance keeps its prototype's methods.
  return new Proxy(coordinator, {
    get(target, property) {
      if (property === "start") return start;
      const value: unknown = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
