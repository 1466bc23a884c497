import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startCliServer, type CliServer } from "../../../src/cli-server.js";

export type { CliServer };

/**
 * Start `leasehold-server --port 0 --lease-ms <leaseMs>` with a scratch data directory, which
 * `stop()` removes once the server has exited. A separate process keeps the server's lease timers
 * away from the load generator's event loop, as in production.
 */
export async function startLeaseServer(leaseMs: number): Promise<CliServer> {
  const dataDir = mkdtempSync(join(tmpdir(), "leasehold-me-"));
  const args = ["--host", "127.0.0.1", "--port", "0", "--lease-ms", String(leaseMs), "--data-dir", dataDir, "--log-level", "info"];
  const server = await startCliServer(args).catch((err: unknown) => {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  });
  return {
    ...server,
    async stop(timeoutMs?: number) {
      const code = await server.stop(timeoutMs);
      rmSync(dataDir, { recursive: true, force: true });
      return code;
    },
  };
}
