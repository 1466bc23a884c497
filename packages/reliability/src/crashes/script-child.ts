import { spawn, type ChildProcess } from "node:child_process";
import { onJsonLines } from "./json-lines.js";
import { childScript } from "./paths.js";

/** A compiled child script of this directory, run with node, speaking JSON lines on stdout. */
export class ScriptChild<E extends { readonly event: string }> {
  /** Events received so far, in order. */
  readonly events: E[] = [];
  /** Resolves with the exit code or signal name. */
  readonly exited: Promise<number | string>;
  /** What it wrote on stderr (the first 20,000 characters), for failure messages. */
  stderr = "";
  readonly #child: ChildProcess;
  readonly #listeners = new Set<(event: E) => void>();

  /** Start `dist/crashes/<name>.js` with `config` as its one JSON argument, and `nodeArgs` (e.g. `--expose-gc`) for node. */
  constructor(name: string, config: unknown, nodeArgs: readonly string[] = []) {
    this.#child = spawn(process.execPath, [...nodeArgs, childScript(name), JSON.stringify(config)], { stdio: ["ignore", "pipe", "pipe"] });
    this.exited = new Promise((resolve) => this.#child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown")));
    this.#child.stderr?.setEncoding("utf8");
    this.#child.stderr?.on("data", (chunk: string) => {
      if (this.stderr.length < 20_000) this.stderr += chunk;
    });
    onJsonLines(this.#child.stdout!, (line) => {
      const event = line as unknown as E;
      this.events.push(event);
      for (const listener of this.#listeners) listener(event);
    });
  }

  /** OS process id. */
  get pid(): number {
    return this.#child.pid as number;
  }

  /** The first event named `name` (already received or still to come); rejects on exit or after `timeoutMs`. */
  next<N extends E["event"]>(name: N, timeoutMs: number): Promise<Extract<E, { event: N }>> {
    const known = this.events.find((e) => e.event === name);
    if (known !== undefined) return Promise.resolve(known as Extract<E, { event: N }>);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no "${name}" event within ${timeoutMs} ms; stderr: ${this.stderr}`)), timeoutMs);
      const listener = (event: E): void => {
        if (event.event !== name) return;
        clearTimeout(timer);
        this.#listeners.delete(listener);
        resolve(event as Extract<E, { event: N }>);
      };
      this.#listeners.add(listener);
      void this.exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`the child exited (${code}) before "${name}"; stderr: ${this.stderr}`));
      });
    });
  }

  /** Send SIGKILL (no-op once it has exited) and resolve when it is gone. */
  async kill(): Promise<number | string> {
    if (this.#child.exitCode === null && this.#child.signalCode === null) this.#child.kill("SIGKILL");
    return this.exited;
  }
}
