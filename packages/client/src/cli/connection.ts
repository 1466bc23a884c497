import { readFileSync } from "node:fs";
import { NAMESPACE_PATTERN } from "@leasehold/protocol";
import { UsageError } from "./usage-error.js";

/** Where the server is and how to authenticate, as every subcommand needs it. */
export interface Connection {
  /** The server's base URL. */
  readonly url: string;
  /** The namespace named by `--namespace` or `LEASEHOLD_NAMESPACE`; undefined when neither is set. */
  readonly namespace: string | undefined;
  /** Headers for every request: `authorization` when a token was given. */
  readonly headers: Readonly<Record<string, string>>;
}

/** The flags {@link resolveConnection} reads, as `parseArgs` returns them. */
export interface ConnectionFlags {
  readonly url?: string | undefined;
  readonly namespace?: string | undefined;
  readonly "token-file"?: string | undefined;
}

/** The `parseArgs` option table for {@link ConnectionFlags}, shared by every subcommand. */
export const CONNECTION_OPTIONS = {
  url: { type: "string" },
  namespace: { type: "string", short: "n" },
  "token-file": { type: "string" },
} as const;

/** The `--help` lines for {@link CONNECTION_OPTIONS}. */
export const CONNECTION_HELP = `  --url <url>           server URL (default: $LEASEHOLD_URL, else http://127.0.0.1:7878)
  -n, --namespace <ns>  namespace (default: $LEASEHOLD_NAMESPACE)
  --token-file <path>   file holding the bearer token (default: the token in $LEASEHOLD_TOKEN);
                        never a command-line value, which every local user sees in ps`;

/** Default server URL: the standalone server's default address. */
export const DEFAULT_URL = "http://127.0.0.1:7878";

/**
 * Resolve the connection from flags first, then the environment. The token is read from a file
 * or `LEASEHOLD_TOKEN`, never taken from argv (visible to every local user and kept in shell
 * history), the same rule the server applies to its own token table.
 */
export function resolveConnection(flags: ConnectionFlags, env: NodeJS.ProcessEnv): Connection {
  // An empty variable counts as unset, as shells make it easy to export one by accident.
  const url = flags.url ?? (env.LEASEHOLD_URL === "" ? undefined : env.LEASEHOLD_URL) ?? DEFAULT_URL;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`${flags.url !== undefined ? "--url" : "LEASEHOLD_URL"} is not a URL (got ${JSON.stringify(url)})`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new UsageError(`${flags.url !== undefined ? "--url" : "LEASEHOLD_URL"} must be an http: or https: URL (got ${JSON.stringify(url)})`);
  }
  const namespace = flags.namespace ?? (env.LEASEHOLD_NAMESPACE === "" ? undefined : env.LEASEHOLD_NAMESPACE);
  if (namespace !== undefined) checkNamespace(flags.namespace !== undefined ? "--namespace" : "LEASEHOLD_NAMESPACE", namespace);
  let token: string | undefined;
  if (flags["token-file"] !== undefined) {
    try {
      token = readFileSync(flags["token-file"], "utf8").trim();
    } catch (err) {
      throw new UsageError(`--token-file: cannot read ${JSON.stringify(flags["token-file"])}: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (token === "") throw new UsageError(`--token-file: ${JSON.stringify(flags["token-file"])} is empty`);
  } else if (env.LEASEHOLD_TOKEN !== undefined && env.LEASEHOLD_TOKEN !== "") token = env.LEASEHOLD_TOKEN.trim();
  return { url, namespace, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } };
}

/** Refuse a namespace the server would refuse, naming where it came from. */
export function checkNamespace(source: string, namespace: string): void {
  if (!NAMESPACE_PATTERN.test(namespace)) {
    throw new UsageError(`${source} must match ${NAMESPACE_PATTERN.source} (got ${JSON.stringify(namespace)})`);
  }
}
