import type { ClusterMembersResponse } from "@leasehold/protocol";
import { adminRequest } from "./admin-request.js";
import { CONNECTION_HELP, CONNECTION_OPTIONS, resolveConnection } from "./connection.js";
import { EXIT } from "./exit-status.js";
import { formatMs, formatTable } from "./format-table.js";
import { parseCommandLine } from "./parse-command-line.js";
import { UsageError } from "./usage-error.js";

/** The `leasehold cluster --help` text. */
export const CLUSTER_HELP = `Usage: leasehold cluster status [options]

Every server of the cluster the server at LEASEHOLD_URL (or --url) belongs to, one line each: its
URL, whether it answers that server's probe, the shards it leads and how many of them have an
in-sync standby, the shards it stands by for and how many of those are in sync, whether it says it
is protected (its GET /v1/health?protected), and the worst standby lag over the shards it leads
(entries not yet acknowledged, and the oldest one's age). The last line says whether the cluster
is protected: every shard led with an in-sync standby, and every server protected, so that a crash
of any one server loses no lock. A single server (no cluster) is never protected.

Options:
  --json                print the server's GET /v1/cluster/members answer, for scripts
${CONNECTION_HELP}
  -h, --help            print this help

Exit status: 0 the cluster is protected, 1 it is not (yet), 125 the server could not be reached or
refused, 2 a command-line mistake. So \`leasehold cluster status >/dev/null\` is a deploy gate.
`;

/** Exit status of `cluster status` when the cluster answered but is not protected. */
const NOT_PROTECTED = 1;

/** `leasehold cluster status`: resolves with the exit status. */
export async function clusterCommand(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { values, positionals } = parseCommandLine(argv, {
    ...CONNECTION_OPTIONS,
    json: { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  });
  if (values.help) {
    process.stdout.write(CLUSTER_HELP);
    return EXIT.ok;
  }
  if (positionals.length !== 1 || positionals[0] !== "status") {
    throw new UsageError(`the cluster command takes one subcommand, status (got ${positionals.length === 0 ? "none" : positionals.map((p) => JSON.stringify(p)).join(" ")})`);
  }
  const connection = resolveConnection({ ...values, namespace: undefined }, { ...env, LEASEHOLD_NAMESPACE: undefined });
  const answer = await adminRequest<ClusterMembersResponse>(connection, "GET", "/v1/cluster/members");
  const status = clusterStatus(answer);
  process.stdout.write(values.json ? `${JSON.stringify(answer, null, 2)}\n` : status.text);
  return status.protected ? EXIT.ok : NOT_PROTECTED;
}

/** The table and last line of `leasehold cluster status`, and whether the cluster is protected. */
export function clusterStatus(answer: ClusterMembersResponse): { readonly text: string; readonly protected: boolean } {
  const of = (inSync: number | undefined, all: number | undefined): string => (inSync === undefined || all === undefined ? "-" : `${inSync}/${all}`);
  const rows = answer.members.map((m) => {
    let entries: number | null = null;
    let ms: number | null = null;
    for (const l of answer.leaders) {
      if (l.leaderServerId !== m.serverId || l.standby === null || typeof l.standby.lagEntries !== "number") continue;
      entries = Math.max(entries ?? 0, l.standby.lagEntries);
      ms = Math.max(ms ?? 0, l.standby.lagMs ?? 0);
    }
    const c = m.cluster;
    return [
      `${m.serverId}${m.self ? " *" : ""}`,
      m.url,
      m.answering ? (m.ready ? "up" : "joining") : "down",
      String(m.shardsLed),
      of(c?.shardsLedInSync, c?.shardsLed),
      of(c?.standbyForInSync, c?.standbyFor),
      c?.protected === undefined ? "-" : c.protected ? "yes" : "no",
      entries === null ? "-" : `${entries} / ${formatMs(ms ?? 0)}`,
    ];
  });
  const synced = answer.leaders.filter((l) => l.leaderServerId !== null && l.standby?.inSync === true).length;
  const safe = answer.members.filter((m) => m.cluster?.protected === true).length;
  const isProtected = synced === answer.shards && safe === answer.members.length;
  const table = formatTable(["SERVER", "URL", "STATE", "LED", "LED IN SYNC", "STANDBY FOR", "PROTECTED", "LAG (entries / oldest)"], rows);
  const verdict = `${isProtected ? "protected" : "NOT protected"}: ${synced} of ${answer.shards} shards led with an in-sync standby, ${safe} of ${answer.members.length} servers protected (* = the server asked)\n`;
  return { text: table + verdict, protected: isProtected };
}
