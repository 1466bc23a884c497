import { LIMITS, revokePath, type RevokeRequest, type RevokeResponse } from "@leasehold/protocol";
import { adminRequest } from "./admin-request.js";
import { checkNamespace, CONNECTION_HELP, CONNECTION_OPTIONS, resolveConnection } from "./connection.js";
import { EXIT } from "./exit-status.js";
import { formatMs, formatTable, printable } from "./format-table.js";
import { UsageError } from "./usage-error.js";
import { parseCommandLine } from "./parse-command-line.js";

/** The `leasehold revoke --help` text. */
export const REVOKE_HELP = `Usage: leasehold revoke [namespace] (--fingerprint <fp>... | --descriptor <d>...) [options]

Releases what the named holders hold, as if they had unlocked: waiters are granted at once. A
holder learns it lost its lock at its next refresh. --fingerprint names holders by the fingerprint
\`leasehold inspect\` shows; --descriptor releases every holder of that descriptor (each holder
whole: every descriptor it holds). Needs an admin token ("@admin" in the server's auth table), or
a server started with --allow-admin-without-auth.

Options:
  --fingerprint <fp>    a holder's fingerprint (16 hex digits); repeat for several
  --descriptor <d>      a descriptor whose holders to release; repeat for several
  --reason <text>       why, written to the server's log (up to ${LIMITS.maxClientDescriptionLength} characters)
  --json                print the server's answer as JSON, for scripts
${CONNECTION_HELP}
  -h, --help            print this help

The namespace is the argument, else --namespace, else LEASEHOLD_NAMESPACE.

Exit status: 0 something was released, 1 nothing matched (no such holder), 125 the server could
not be reached or refused (403 PERMISSION_DENIED without an admin token), 2 a command-line mistake.
`;

function parseRevokeArgs(argv: readonly string[]) {
  const parsed = parseCommandLine(argv, {
    ...CONNECTION_OPTIONS,
    fingerprint: { type: "string", multiple: true },
    descriptor: { type: "string", multiple: true },
    reason: { type: "string" },
    json: { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  });
  return parsed;
}

/** `leasehold revoke`: resolves with the exit status. */
export async function revokeCommand(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { values, positionals } = parseRevokeArgs(argv);
  if (values.help) {
    process.stdout.write(REVOKE_HELP);
    return EXIT.ok;
  }
  if (positionals.length > 1) throw new UsageError(`revoke takes at most one namespace (got ${positionals.map((p) => JSON.stringify(p)).join(" ")})`);
  const connection = resolveConnection(values, env);
  const namespace = positionals[0] ?? connection.namespace;
  if (namespace === undefined) throw new UsageError("revoke: the namespace is missing: give it as an argument, --namespace or LEASEHOLD_NAMESPACE");
  if (positionals[0] !== undefined) checkNamespace("the namespace", namespace);
  const fingerprints = values.fingerprint ?? [];
  const descriptors = values.descriptor ?? [];
  if ((fingerprints.length > 0) === (descriptors.length > 0)) {
    throw new UsageError("revoke: give --fingerprint or --descriptor (one kind, repeated as needed)");
  }
  for (const fp of fingerprints) {
    if (!/^[0-9a-f]{16}$/.test(fp)) throw new UsageError(`--fingerprint must be 16 lower-case hexadecimal digits, as inspect shows it (got ${JSON.stringify(fp)})`);
  }
  if (fingerprints.length > LIMITS.maxRevokeEntries || descriptors.length > LIMITS.maxRevokeEntries) {
    throw new UsageError(`revoke: at most ${LIMITS.maxRevokeEntries} --fingerprint or --descriptor values at once`);
  }
  if (descriptors.includes("")) throw new UsageError("--descriptor must not be empty");
  if (values.reason !== undefined && values.reason.length > LIMITS.maxClientDescriptionLength) {
    throw new UsageError(`--reason must be at most ${LIMITS.maxClientDescriptionLength} characters (got ${values.reason.length})`);
  }
  const body: RevokeRequest = {
    ...(fingerprints.length > 0 ? { fingerprints } : { descriptors }),
    ...(values.reason === undefined ? {} : { reason: values.reason }),
  };
  const answer = await adminRequest<RevokeResponse>(connection, "POST", revokePath(namespace), body);
  if (values.json) process.stdout.write(`${JSON.stringify(answer, null, 2)}\n`);
  else process.stdout.write(formatRevoke(namespace, answer));
  return answer.revoked.length > 0 ? EXIT.ok : 1;
}

function formatRevoke(namespace: string, answer: RevokeResponse): string {
  let out = "";
  if (answer.revoked.length === 0) out += `nothing revoked in namespace ${namespace}\n`;
  else {
    out += `revoked ${answer.revoked.length} holder${answer.revoked.length === 1 ? "" : "s"} in namespace ${namespace}:\n`;
    const rows = answer.revoked.map((r) => [
      r.fingerprint ?? "(acquiring)",
      formatMs(r.heldForMs),
      r.startTimestamp !== undefined ? `immutable-timestamp lock at ${r.startTimestamp}` : r.descriptors.map(printable).join(", "),
      printable(r.clientDescription),
    ]);
    out += formatTable(["FINGERPRINT", "HELD FOR", "DESCRIPTORS", "DESCRIPTION"], rows);
  }
  if (answer.notFound.length > 0) out += `not found: ${answer.notFound.map((n) => printable(n)).join(", ")}\n`;
  return out;
}
