import { readFileSync } from "node:fs";
import { parseAuthTable, type AuthTable } from "./auth-table.js";

/** The environment variable holding an auth table as JSON, when no file is given. */
export const AUTH_TOKENS_ENV = "LEASEHOLD_AUTH_TOKENS";

/** Where {@link loadAuthTable} looks. */
export interface LoadAuthTableOptions {
  /** Path of a JSON auth table file (`--auth-file`). Wins over the environment when both are set. */
  readonly file?: string | undefined;
  /** The environment to read {@link AUTH_TOKENS_ENV} from. Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
}

/**
 * Load the auth table of the standalone server: from `file` if given, else from the
 * `LEASEHOLD_AUTH_TOKENS` environment variable, else none (`undefined`: authentication off).
 * Tokens never come from a command-line value, because argv is readable by every local user
 * (`ps`) and lands in shell history. Throws an `Error` naming the source on any mistake.
 */
export function loadAuthTable(options: LoadAuthTableOptions = {}): AuthTable | undefined {
  if (options.file !== undefined) {
    let text: string;
    try {
      text = readFileSync(options.file, "utf8");
    } catch (err) {
      throw new Error(`--auth-file ${options.file}: cannot read it (${err instanceof Error ? err.message : String(err)})`);
    }
    return parseAuthTable(text, `--auth-file ${options.file}`);
  }
  const fromEnv = (options.env ?? process.env)[AUTH_TOKENS_ENV];
  if (fromEnv === undefined || fromEnv === "") return undefined;
  return parseAuthTable(fromEnv, AUTH_TOKENS_ENV);
}
