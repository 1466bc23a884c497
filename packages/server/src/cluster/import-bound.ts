import { shardOf } from "@leasehold/protocol";
import { join } from "node:path";
import { readBoundFile, TIMESTAMP_BOUND_FILE } from "../timestamps/file-timestamp-reserver.js";
import type { Coordinator, ShardLease } from "./coordinator.js";

/** What {@link importBound} did. */
export interface ImportBoundResult {
  /** Namespaces whose bound was copied (raised, or left where it was when already higher). */
  readonly namespaces: number;
  /** The bound file read. */
  readonly file: string;
}

/**
 * `import-bound` found a namespace whose shard has a live leader: that leader may have loaded the
 * namespace's bound already and would keep counting below the imported one (a timestamp handed out
 * twice). Nothing more is imported once this is thrown.
 */
export class ImportIntoLiveShardError extends Error {
  override name = "ImportIntoLiveShardError";
  constructor(
    readonly namespace: string,
    readonly shard: number,
    readonly holder: string | null,
  ) {
    super(
      `refused: namespace ${JSON.stringify(namespace)} belongs to shard ${shard}, which ${holder === null ? "a server" : `server ${JSON.stringify(holder)}`} leads now; ` +
        "a leader that already loaded the namespace would keep handing out numbers below the imported bound. " +
        "Stop every cluster server (or wait until their leader leases have expired), run import-bound again, then start the cluster",
    );
  }
}

/**
 * Copy a single server's durable timestamp bounds (`<dataDir>/timestamp-bound.json`) into a
 * cluster, so that the cluster continues above every number the single server handed out. Never
 * lowers a bound. Refused ({@link ImportIntoLiveShardError}) while a namespace's shard has a live
 * leader: first every namespace is checked against the lease rows, so a refused import changes
 * nothing; then each namespace is imported by a statement that itself refuses while its shard has
 * a live leader (a leader that started meanwhile), which stops the import there. Run it with the
 * single server and the cluster stopped (docs/cluster.md "Moving from a single server"); running it
 * again is harmless.
 */
export async function importBound(coordinator: Coordinator, dataDir: string): Promise<ImportBoundResult> {
  const file = join(dataDir, TIMESTAMP_BOUND_FILE);
  const bounds = readBoundFile(file);
  const shards = await coordinator.start(undefined);
  const leases = await coordinator.readLeases();
  for (const namespace of bounds.keys()) {
    const row = leases[shardOf(namespace, shards)];
    if (row !== undefined && live(row)) throw new ImportIntoLiveShardError(namespace, row.shard, row.holder);
  }
  for (const [namespace, bound] of bounds) {
    const shard = shardOf(namespace, shards);
    if (!(await coordinator.importBound(namespace, bound, shard))) throw new ImportIntoLiveShardError(namespace, shard, null);
  }
  return { namespaces: bounds.size, file };
}

function live(row: ShardLease): boolean {
  return row.holder !== null && !row.expired;
}
