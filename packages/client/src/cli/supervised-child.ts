import { spawn, type ChildProcess } from "node:child_process";
import { constants } from "node:os";
import { EXIT, signalStatus } from "./exit-status.js";

/** Signals `leasehold lock` passes on to its command rather than dying of them. */
export const FORWARDED_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const satisfies readonly NodeJS.Signals[];

/** How a supervised command ended, as a shell exit status, and whether it ever started. */
export interface ChildOutcome {
  /** The status to exit with: the command's own, 128 + signal number, or 126/127 if it never ran. */
  readonly status: number;
  /** Why it could not start, when it could not (`ENOENT`, `EACCES`, …). */
  readonly startError?: string | undefined;
}

/**
 * A command run with inherited stdio, whose signals (SIGINT, SIGTERM, SIGHUP) arrive through its
 * parent: the parent catches them and passes them on, so it stays alive to release the lock after
 * the command ends.
 */
export class SupervisedChild {
  /** Undefined when `spawn` threw (arguments it refuses, such as a NUL byte in the command). */
  readonly #child: ChildProcess | undefined;
  readonly #forward = new Map<NodeJS.Signals, () => void>();
  #killTimer: NodeJS.Timeout | undefined;
  /** Settles once the command has ended (or failed to start). */
  readonly ended: Promise<ChildOutcome>;

  constructor(command: string, args: readonly string[], env: NodeJS.ProcessEnv) {
    // The handlers go in before the command starts: a signal sent as soon as the command is up
    // (it may print "ready" before spawn() has even returned here) must find them, or the default
    // action kills this process and leaves the command running with nobody to release the lock.
    // Handlers run on the event loop, never inside this constructor, so `#child` is set by then.
    for (const signal of FORWARDED_SIGNALS) {
      const handler = (): void => {
        this.#child?.kill(signal);
      };
      this.#forward.set(signal, handler);
      process.on(signal, handler);
    }
    let child: ChildProcess | undefined;
    let thrown: unknown;
    try {
      child = spawn(command, args, { stdio: "inherit", env });
    } catch (err) {
      // Refused before anything ran: answered like a failed start, and the handlers come out.
      thrown = err;
    }
    this.#child = child;
    this.ended = new Promise<ChildOutcome>((resolve) => {
      if (child === undefined) {
        resolve({ status: EXIT.cannotRun, startError: thrown instanceof Error ? thrown.message : String(thrown) });
        return;
      }
      child.once("error", (err: NodeJS.ErrnoException) => {
        // spawn failed: the command never ran (exit is not emitted then).
        resolve({ status: err.code === "ENOENT" ? EXIT.notFound : EXIT.cannotRun, startError: err.message });
      });
      child.once("exit", (code, signal) => {
        resolve({ status: signal !== null ? signalStatus(signal, constants.signals) : (code ?? EXIT.failed) });
      });
    }).finally(() => this.#detach());
  }

  /**
   * Stop the command: SIGTERM now, SIGKILL after `graceMs` if it is still running. Called when
   * the lock is lost: the command must not go on believing it holds it.
   */
  terminate(graceMs: number): void {
    const child = this.#child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    if (Number.isFinite(graceMs)) {
      this.#killTimer = setTimeout(() => child.kill("SIGKILL"), graceMs);
    }
  }

  #detach(): void {
    clearTimeout(this.#killTimer);
    for (const [signal, handler] of this.#forward) process.off(signal, handler);
    this.#forward.clear();
  }
}
