/**
 * The exit statuses of `leasehold` that are not the command's own. Chosen like `timeout(1)`'s
 * (124 timed out, 125 the tool failed, 126 cannot run, 127 not found) so shell users meet familiar
 * numbers; 123 is the one leasehold adds: the lock was lost while the command ran.
 */
export const EXIT = {
  /** Success of `inspect`/`revoke`. */
  ok: 0,
  /** A mistake on the command line (unknown flag, bad value): nothing was done. */
  usage: 2,
  /** The lock was lost while the command ran: the command was sent SIGTERM (then SIGKILL). */
  lockLost: 123,
  /** `--timeout` passed before the lock was granted: the command never ran. */
  timeout: 124,
  /** leasehold itself failed: server unreachable, credentials refused, a bad answer. */
  failed: 125,
  /** The command was found but could not be run (not executable). */
  cannotRun: 126,
  /** The command was not found. */
  notFound: 127,
} as const;

/** The shell's status for a process killed by a signal: 128 + its number. */
export function signalStatus(signal: NodeJS.Signals, constants: Readonly<Record<string, number>>): number {
  return 128 + (constants[signal] ?? 0);
}
