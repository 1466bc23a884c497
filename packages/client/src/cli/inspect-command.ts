import {
  INSPECTION_VIEWS,
  LIMITS,
  namespaceLocksPath,
  namespacesPath,
  type InspectionView,
  type NamespaceLocksResponse,
  type NamespacesResponse,
} from "@leasehold/protocol";
import { adminRequest } from "./admin-request.js";
import { checkNamespace, CONNECTION_HELP, CONNECTION_OPTIONS, resolveConnection, type Connection } from "./connection.js";
import { EXIT } from "./exit-status.js";
import { formatLocksPage, formatNamespaces } from "./format-inspection.js";
import { UsageError } from "./usage-error.js";
import { parseCommandLine } from "./parse-command-line.js";

/** The `leasehold inspect --help` text. */
export const INSPECT_HELP = `Usage: leasehold inspect [namespace] [options]

Without a namespace: every namespace with its counts (held, tokens, waiting, immutable-timestamp
locks, oldest hold, longest wait). With one: its descriptors, each with its holders (mode, fencing
token, fingerprint, held for, lease left, description) and its waiters in queue order (waiting
for, deadline left, description). A fingerprint names a holder for \`leasehold revoke\`; the token
itself is never shown. LEASEHOLD_NAMESPACE is not read here, so that a bare \`inspect\` always lists
every namespace.

Options:
  --view <view>         ${INSPECTION_VIEWS.join(", ")} (default: descriptors): watchers are waiting
                        as-many-as-possible requests; immutable are immutable-timestamp locks
  --prefix <text>       only descriptors starting with <text>
  --contended           only descriptors somebody waits for
  --limit <n>           show at most <n> entries (default: 100; pages are followed up to it)
  --cursor <cursor>     start after this entry (the nextCursor of a --json answer)
  --json                print the server's answer as JSON (pages joined), for scripts
${CONNECTION_HELP}
  -h, --help            print this help

Exit status: 0 answered, 125 the server could not be reached or refused, 2 a command-line mistake.
`;

/** Most entries one `inspect` follows pages for: a runaway `--limit` must not page a huge table. */
const MAX_ENTRIES = 100_000;

function parseInspectArgs(argv: readonly string[]) {
  const parsed = parseCommandLine(argv, {
    ...CONNECTION_OPTIONS,
    view: { type: "string", default: "descriptors" },
    prefix: { type: "string" },
    contended: { type: "boolean", default: false },
    limit: { type: "string", default: "100" },
    cursor: { type: "string" },
    json: { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  });
  const { values, positionals } = parsed;
  if (positionals.length > 1) throw new UsageError(`inspect takes at most one namespace (got ${positionals.map((p) => JSON.stringify(p)).join(" ")})`);
  if (positionals[0] !== undefined && values.namespace !== undefined) throw new UsageError("give the namespace either as an argument or as --namespace, not both");
  const namespace = positionals[0] ?? values.namespace;
  if (namespace !== undefined) checkNamespace(positionals[0] !== undefined ? "the namespace" : "--namespace", namespace);
  const view = INSPECTION_VIEWS.find((v) => v === values.view);
  if (view === undefined) throw new UsageError(`--view must be one of ${INSPECTION_VIEWS.join(", ")} (got ${JSON.stringify(values.view)})`);
  const limit = Number(values.limit);
  if (!/^\d+$/.test(values.limit) || limit < 1 || limit > MAX_ENTRIES) {
    throw new UsageError(`--limit must be an integer from 1 to ${MAX_ENTRIES} (got ${JSON.stringify(values.limit)})`);
  }
  if (namespace === undefined && (values.prefix !== undefined || values.contended || values.view !== "descriptors")) {
    throw new UsageError("--view, --prefix and --contended need a namespace: leasehold inspect <namespace> …");
  }
  if (values.prefix === "") throw new UsageError("--prefix must not be empty");
  if (values.cursor === "") throw new UsageError("--cursor must not be empty");
  return { values, namespace, view, limit };
}

/** `leasehold inspect`: resolves with the exit status. */
export async function inspectCommand(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const args = parseInspectArgs(argv);
  if (args.values.help) {
    process.stdout.write(INSPECT_HELP);
    return EXIT.ok;
  }
  // The namespace comes from argv only (see the help); the environment still gives URL and token.
  const connection = resolveConnection({ ...args.values, namespace: undefined }, { ...env, LEASEHOLD_NAMESPACE: undefined });
  if (args.namespace === undefined) {
    const answer = await listNamespaces(connection, args.limit, args.values.cursor);
    process.stdout.write(args.values.json ? `${JSON.stringify(answer, null, 2)}\n` : formatNamespaces(answer));
    return EXIT.ok;
  }
  const page = await listLocks(connection, args.namespace, args.view, args.limit, args.values.prefix, args.values.contended, args.values.cursor);
  process.stdout.write(args.values.json ? `${JSON.stringify(page, null, 2)}\n` : formatLocksPage(page));
  return EXIT.ok;
}

async function listNamespaces(connection: Connection, limit: number, cursor: string | undefined): Promise<NamespacesResponse> {
  const namespaces: NamespacesResponse["namespaces"][number][] = [];
  let next = cursor;
  for (;;) {
    const pageSize = Math.min(LIMITS.maxInspectionPageSize, limit - namespaces.length);
    const page = await adminRequest<NamespacesResponse>(connection, "GET", namespacesPath({ cursor: next, limit: pageSize }));
    namespaces.push(...page.namespaces);
    next = page.nextCursor;
    if (next === undefined || namespaces.length >= limit) break;
  }
  return next === undefined ? { namespaces } : { namespaces, nextCursor: next };
}

async function listLocks(
  connection: Connection,
  namespace: string,
  view: InspectionView,
  limit: number,
  prefix: string | undefined,
  contended: boolean,
  cursor: string | undefined,
): Promise<NamespaceLocksResponse> {
  let joined: NamespaceLocksResponse | undefined;
  let next = cursor;
  let count = 0;
  for (;;) {
    const pageSize = Math.min(LIMITS.maxInspectionPageSize, limit - count);
    const path = namespaceLocksPath(namespace, { view, prefix, contended, cursor: next, limit: pageSize });
    const page = await adminRequest<NamespaceLocksResponse>(connection, "GET", path);
    joined = joined === undefined ? page : joinPages(joined, page);
    count += entries(page);
    next = page.nextCursor;
    if (next === undefined || count >= limit || entries(page) === 0) break;
  }
  const { nextCursor: _dropped, ...rest } = joined;
  return (next === undefined ? rest : { ...rest, nextCursor: next }) as NamespaceLocksResponse;
}

function entries(page: NamespaceLocksResponse): number {
  if (page.view === "descriptors") return page.descriptors.length;
  if (page.view === "watchers") return page.watchers.length;
  return page.immutableTimestampLocks.length;
}

/** A later page appended to the earlier ones; the summary is the latest. */
function joinPages(a: NamespaceLocksResponse, b: NamespaceLocksResponse): NamespaceLocksResponse {
  if (a.view === "descriptors" && b.view === "descriptors") return { ...b, descriptors: [...a.descriptors, ...b.descriptors] };
  if (a.view === "watchers" && b.view === "watchers") return { ...b, watchers: [...a.watchers, ...b.watchers] };
  if (a.view === "immutable" && b.view === "immutable") return { ...b, immutableTimestampLocks: [...a.immutableTimestampLocks, ...b.immutableTimestampLocks] };
  return b;
}
