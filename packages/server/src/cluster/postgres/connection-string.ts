import pg from "pg";

/**
 * Refuse a malformed connection string at once, with a message that never repeats it (it may hold
 * a password): node-postgres would otherwise read a string that is not a URL as the host "base"
 * and fail later with a misleading DNS error, or throw on a bad port at the first connection.
 */
export function checkConnectionString(connectionString: string): void {
  if (!/^(postgres|postgresql):\/\/|^socket:|^\//.test(connectionString)) {
    throw new RangeError("the cluster connection string must be a PostgreSQL URL, postgres://user@host:5432/database (or a socket path starting with /)");
  }
  try {
    new pg.Client({ connectionString }).removeAllListeners();
  } catch (err) {
    throw new RangeError(`the cluster connection string is malformed (${err instanceof Error ? err.message : String(err)}); give postgres://user@host:5432/database`);
  }
}
