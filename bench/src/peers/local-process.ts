import type { ChildProcess } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { createServer } from "node:net";
import { delimiter, join } from "node:path";

/**
 * The executable `name` on PATH (the first directory that has it, as a shell would pick), or
 * undefined when there is none: a peer whose server the benchmark starts is then skipped, and the
 * run says so, rather than failing the suite on a machine without it.
 */
export function findOnPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * A loopback port nothing listens on right now: the kernel's pick, released at once for a server
 * the benchmark starts to take (fixed ports would collide with other runs on a shared machine).
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

/**
 * Stop `child` with SIGTERM, then SIGKILL after `killAfterMs` (default 5 s: long enough for a
 * server's orderly exit, short enough that a stuck one does not hold up the run), and wait for it
 * to exit. Resolves at once for a child that already exited.
 */
export async function stopChild(child: ChildProcess, killAfterMs = 5_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), killAfterMs);
  await exited;
  clearTimeout(timer);
}
