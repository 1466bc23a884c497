import { join } from "node:path";
import { readBoundFile, TIMESTAMP_BOUND_FILE } from "../timestamps/file-timestamp-reserver.js";
import type { Coordinator } from "./coordinator.js";

/** What {@link importBound} did. */
export interface ImportBoundResult {
  /** Namespaces whose bound was copied (raised, or left where it was when already higher). */
  readonly namespaces: number;
  /** The bound file read. */
  readonly file: string;
}

/**
 * Copy a single server's durable timestamp bounds (`<dataDir>/timestamp-bound.json`) into a
 * cluster, so that the cluster continues above every number the single server handed out. Never
 * lowers a bound. Run it with the single server stopped and before cluster leaders serve those
 * namespaces (docs/cluster.md "Moving from a single server"); running it again is harmless.
 */
export async function importBound(coordinator: Coordinator, dataDir: string): Promise<ImportBoundResult> {
  const file = join(dataDir, TIMESTAMP_BOUND_FILE);
  const bounds = readBoundFile(file);
  await coordinator.start(undefined);
  for (const [namespace, bound] of bounds) await coordinator.importBound(namespace, bound);
  return { namespaces: bounds.size, file };
}
