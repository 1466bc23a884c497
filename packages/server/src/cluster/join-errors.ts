import { ShardCountMismatchError } from "./coordinator.js";

/**
 * SQLSTATE classes that waiting cannot fix: `28` (invalid authorization: bad password, unknown
 * role), `3D` (the database does not exist) and `42` (syntax or access rule: the role may not
 * create the schema or the tables).
 */
const PERMANENT_SQLSTATE_CLASSES = ["28", "3D", "42"];

/**
 * True when joining the cluster failed for a reason that retrying will not fix, so the server must
 * exit with the message instead of waiting for the database: a `--shards` that differs from the
 * cluster's ({@link ShardCountMismatchError}), bad credentials, a database that does not exist, a
 * permission the role lacks, or a port no socket can use (a `RangeError` when connecting; the rest
 * of a malformed connection string is refused before joining starts). Everything else (refused or
 * timed-out connections, a database starting up or shutting down, a cut connection, DNS failures,
 * and errors of unknown kind, such as a `TypeError` from inside the driver) is retried: the server
 * keeps listening, answers 503, logs each failed attempt, and joins when the database answers,
 * rather than exiting over a failure that may pass.
 */
export function isPermanentJoinError(err: unknown): boolean {
  if (err instanceof ShardCountMismatchError || err instanceof RangeError) return true;
  const code = typeof err === "object" && err !== null && "code" in err ? (err as { code: unknown }).code : undefined;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) && PERMANENT_SQLSTATE_CLASSES.includes(code.slice(0, 2));
}

/** The message of a join error for logs and 503 answers (never the connection string itself). */
export function joinErrorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
