import { hostname } from "node:os";
import { constants } from "node:os";
import { isLeaseholdError, LIMITS, type LockSpec } from "@leasehold/protocol";
import { pino } from "pino";
import { LockClient } from "../lock-client.js";
import type { LostLockReason } from "../lost-lock.js";
import { CONNECTION_HELP, CONNECTION_OPTIONS, resolveConnection } from "./connection.js";
import { EXIT, signalStatus } from "./exit-status.js";
import { parseDuration } from "./parse-duration.js";
import { FORWARDED_SIGNALS, SupervisedChild } from "./supervised-child.js";
import { UsageError } from "./usage-error.js";
import { parseCommandLine } from "./parse-command-line.js";

/** The `leasehold lock --help` text. */
export const LOCK_HELP = `Usage: leasehold lock <descriptor> [options] -- <command> [args...]

Waits for the lock on <descriptor>, runs <command> with LEASEHOLD_FENCING_TOKEN in its
environment, keeps the lease refreshed while it runs, and releases the lock when it exits.
SIGINT, SIGTERM and SIGHUP are passed on to the command.

Options:
  --shared              take the lock in shared mode (default: exclusive)
  --permits <n>         take one of <n> permits (a semaphore; 1..1000000)
  --timeout <duration>  give up waiting after this long: 30s, 500ms, 2m, 1h, 0 (try once) or inf
                        (default: inf, wait as long as it takes, like flock(1))
  --kill-after <duration>
                        when the lock is lost, SIGKILL the command this long after SIGTERM
                        (default: 10s; inf: never)
  --description <text>  what the server shows operators about this holder (default:
                        "leasehold lock <descriptor> on <host> pid <pid>: <command>")
  --verbose             log the client's warnings (failed refreshes, ...) on stderr
${CONNECTION_HELP}
  -h, --help            print this help

Exit status:
  the command's own   the command ran and exited; killed by a signal: 128 + its number
  123                 the lock was lost while the command ran (revoked, lease lapsed, server
                      restarted); the command was sent SIGTERM, then SIGKILL after --kill-after
  124                 --timeout passed before the lock was granted; the command never ran
  125                 leasehold failed (server unreachable, credentials refused, bad answer)
  126                 the command could not be run
  127                 the command was not found
  2                   a mistake on the command line
`;

/** Parsed `leasehold lock` arguments. */
interface LockArgs {
  readonly spec: LockSpec;
  readonly timeoutMs: number;
  readonly killAfterMs: number;
  readonly description: string;
  readonly verbose: boolean;
  readonly command: string;
  readonly args: readonly string[];
  readonly flags: Record<string, string | boolean | undefined>;
}

const LOST_WHY: Readonly<Record<LostLockReason | "lease-expiring", string>> = {
  "not-refreshed": "the server no longer holds it: it was revoked, or its lease lapsed while refreshes could not reach the server",
  "leader-changed": "the server restarted or another server took over, which voids every lock",
  "lease-expired": "its lease ran out while refreshes kept failing",
  "lease-expiring": "its lease ran out while refreshes kept failing",
  "max-tenure": "it was held longer than the client's maximum tenure",
  "client-closed": "the client was closed",
};

function parseLockArgs(argv: readonly string[]): LockArgs | "help" {
  const dash = argv.indexOf("--");
  const own = dash < 0 ? argv : argv.slice(0, dash);
  const command = dash < 0 ? [] : argv.slice(dash + 1);
  const parsed = parseCommandLine(own, {
    ...CONNECTION_OPTIONS,
    shared: { type: "boolean", default: false },
    permits: { type: "string" },
    timeout: { type: "string", default: "inf" },
    "kill-after": { type: "string", default: "10s" },
    description: { type: "string" },
    verbose: { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  });
  const { values, positionals } = parsed;
  if (values.help) return "help";
  if (positionals.length === 0) throw new UsageError("lock: the lock descriptor is missing: leasehold lock <descriptor> -- <command>");
  if (positionals.length > 1) {
    throw new UsageError(`lock: one descriptor only, and the command goes after "--" (got ${positionals.map((p) => JSON.stringify(p)).join(" ")})`);
  }
  const descriptor = positionals[0]!;
  if (Buffer.byteLength(descriptor) > LIMITS.maxDescriptorBytes) {
    throw new UsageError(`lock: the descriptor is longer than ${LIMITS.maxDescriptorBytes} UTF-8 bytes`);
  }
  if (command.length === 0 || command[0] === "") throw new UsageError('lock: the command is missing: put it after "--"');
  if (values.shared && values.permits !== undefined) throw new UsageError("--shared and --permits cannot be used together");
  let spec: LockSpec = { descriptor, mode: values.shared ? "shared" : "exclusive" };
  if (values.permits !== undefined) {
    const limit = Number(values.permits);
    if (!/^\d+$/.test(values.permits) || limit < 1 || limit > LIMITS.maxPermitLimit) {
      throw new UsageError(`--permits must be an integer from 1 to ${LIMITS.maxPermitLimit} (got ${JSON.stringify(values.permits)})`);
    }
    spec = { descriptor, mode: "permit", limit };
  }
  const timeoutMs = parseDuration("timeout", values.timeout);
  const killAfterMs = parseDuration("kill-after", values["kill-after"]);
  const defaultDescription = `leasehold lock ${descriptor} on ${hostname()} pid ${process.pid}: ${command.join(" ")}`;
  const description = values.description ?? defaultDescription.slice(0, LIMITS.maxClientDescriptionLength);
  if (description.length > LIMITS.maxClientDescriptionLength) {
    throw new UsageError(`--description must be at most ${LIMITS.maxClientDescriptionLength} characters (got ${description.length})`);
  }
  return { spec, timeoutMs, killAfterMs, description, verbose: values.verbose, command: command[0]!, args: command.slice(1), flags: values };
}

function say(message: string): void {
  process.stderr.write(`leasehold: ${message}\n`);
}

/**
 * `leasehold lock`: what `flock(1)` and `etcdctl lock` do, with fencing and leases. Resolves with
 * the exit status (see {@link LOCK_HELP}).
 */
export async function lockCommand(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const parsed = parseLockArgs(argv);
  if (parsed === "help") {
    process.stdout.write(LOCK_HELP);
    return EXIT.ok;
  }
  const connection = resolveConnection(parsed.flags, env);
  if (connection.namespace === undefined) throw new UsageError("lock: the namespace is missing: give --namespace or set LEASEHOLD_NAMESPACE");
  const logger = pino({ level: parsed.verbose ? "warn" : "silent" }, pino.destination({ dest: 2, sync: true }));
  const client = LockClient.http({
    baseUrl: connection.url,
    namespace: connection.namespace,
    headers: connection.headers,
    logger,
    // The process's own lifetime bounds the hold: when it dies, refreshes stop and the lease lapses.
    maxTenureMs: Infinity,
  });
  try {
    return await holdAndRun(client, parsed, env);
  } finally {
    await client.close().catch(() => undefined);
  }
}

async function holdAndRun(client: LockClient, parsed: LockArgs, env: NodeJS.ProcessEnv): Promise<number> {
  const { spec } = parsed;
  // A signal while waiting cancels the wait; the process then exits as if killed by it.
  const waiting = new AbortController();
  let stoppedBy: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    stoppedBy = signal;
    waiting.abort();
  };
  const stopWaiting = (): void => {
    for (const signal of FORWARDED_SIGNALS) process.off(signal, onSignal);
  };
  for (const signal of FORWARDED_SIGNALS) process.on(signal, onSignal);
  let answer;
  try {
    answer = await client.lock([spec], { acquireTimeoutMs: parsed.timeoutMs, signal: waiting.signal, clientDescription: parsed.description });
  } catch (err) {
    stopWaiting();
    if (stoppedBy !== undefined) {
      say(`${stoppedBy} while waiting for the lock on ${JSON.stringify(spec.descriptor)}; the command was not run`);
      return signalStatus(stoppedBy, constants.signals);
    }
    say(`could not take the lock on ${JSON.stringify(spec.descriptor)}: ${describeError(err)}`);
    return EXIT.failed;
  }
  if (answer.status === "timeout") {
    stopWaiting();
    say(`timed out waiting for the lock on ${JSON.stringify(spec.descriptor)} in namespace ${JSON.stringify(client.namespace)}; the command was not run`);
    return EXIT.timeout;
  }
  const { token } = answer;
  if (stoppedBy !== undefined) {
    // The signal came as the grant did: the command never runs, and the lock goes back at once.
    stopWaiting();
    say(`${stoppedBy} as the lock on ${JSON.stringify(spec.descriptor)} was granted; the command was not run`);
    await client.unlock([token]).catch(() => undefined);
    return signalStatus(stoppedBy, constants.signals);
  }
  const fencingToken = answer.acquired[0]!.fencingToken;
  // The waiting handlers stay until the command's forwarding handlers are in (synchronously, in
  // the constructor): at no moment does a signal meet the default action and kill this process.
  const child = new SupervisedChild(parsed.command, parsed.args, { ...env, LEASEHOLD_FENCING_TOKEN: String(fencingToken) });
  stopWaiting();
  let lost: LostLockReason | "lease-expiring" | undefined;
  const onLost = (reason: LostLockReason | "lease-expiring"): void => {
    if (lost !== undefined) return;
    lost = reason;
    say(`lost the lock on ${JSON.stringify(spec.descriptor)} (fencing token ${fencingToken}): ${LOST_WHY[reason]}; sending the command SIGTERM`);
    child.terminate(parsed.killAfterMs);
  };
  const subscription = client.lostLocks.subscribe((event) => {
    if (event.token === token) onLost(event.reason);
  });
  // The refresher reports a lapse at its next tick; the local lease clock says so at once, while
  // the server still keeps the lock (it promises the client only part of its lease).
  const watch = setInterval(() => {
    if (!client.isHeld(token)) onLost("lease-expiring");
  }, 50);
  const outcome = await child.ended;
  clearInterval(watch);
  subscription.unsubscribe();
  if (outcome.startError !== undefined) say(`cannot run ${JSON.stringify(parsed.command)}: ${outcome.startError}`);
  if (lost !== undefined) {
    client.tryUnlock([token]);
    return EXIT.lockLost;
  }
  try {
    await client.unlock([token]);
  } catch (err) {
    say(`could not release the lock on ${JSON.stringify(spec.descriptor)} (${describeError(err)}); it lapses with its lease`);
  }
  return outcome.status;
}

function describeError(err: unknown): string {
  if (isLeaseholdError(err)) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}
