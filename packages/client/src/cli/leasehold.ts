#!/usr/bin/env node
/**
 * `leasehold`: the command-line tool for shell users and operators. `lock` runs a command while
 * holding a lock (what `flock(1)` and `etcdctl lock` do, with fencing tokens and leases);
 * `inspect` and `revoke` read and free locks over the server's inspection API; `cluster status`
 * shows every server of a cluster and whether a crash of any one of them would lose locks.
 */
import { RequestFailed } from "./admin-request.js";
import { CLUSTER_HELP, clusterCommand } from "./cluster-command.js";
import { EXIT } from "./exit-status.js";
import { inspectCommand, INSPECT_HELP } from "./inspect-command.js";
import { lockCommand, LOCK_HELP } from "./lock-command.js";
import { revokeCommand, REVOKE_HELP } from "./revoke-command.js";
import { UsageError } from "./usage-error.js";

const HELP = `leasehold: command-line client of the leasehold lock server

Usage:
  leasehold lock <descriptor> [options] -- <command> [args...]
  leasehold inspect [namespace] [options]
  leasehold revoke <namespace> (--fingerprint <fp> | --descriptor <d>)... [options]
  leasehold cluster status [options]
  leasehold <subcommand> --help   (or: leasehold help <subcommand>)

Environment: LEASEHOLD_URL (server URL), LEASEHOLD_NAMESPACE, LEASEHOLD_TOKEN (bearer token).
`;

const SUBCOMMANDS: Readonly<Record<string, { run: (argv: readonly string[], env: NodeJS.ProcessEnv) => Promise<number>; help: string }>> = {
  lock: { run: lockCommand, help: LOCK_HELP },
  inspect: { run: inspectCommand, help: INSPECT_HELP },
  revoke: { run: revokeCommand, help: REVOKE_HELP },
  cluster: { run: clusterCommand, help: CLUSTER_HELP },
};

async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  const topic = name === "help" && rest[0] !== undefined ? SUBCOMMANDS[rest[0]] : undefined;
  if (topic !== undefined) {
    process.stdout.write(topic.help);
    return EXIT.ok;
  }
  if (name === undefined || name === "-h" || name === "--help" || name === "help") {
    process.stdout.write(HELP);
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  const sub = SUBCOMMANDS[name];
  if (sub === undefined) {
    process.stderr.write(`leasehold: unknown subcommand ${JSON.stringify(name)}; use lock, inspect, revoke or cluster\n${HELP}`);
    return EXIT.usage;
  }
  try {
    return await sub.run(rest, process.env);
  } catch (err) {
    if (err instanceof RequestFailed) {
      process.stderr.write(`leasehold ${name}: ${err.message}\n`);
      return EXIT.failed;
    }
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`leasehold ${name}: ${err.message}\nRun leasehold ${name} --help for every option.\n`);
    return EXIT.usage;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`leasehold: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(EXIT.failed);
  },
);
