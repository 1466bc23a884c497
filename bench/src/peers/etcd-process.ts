import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Etcd3 } from "etcd3";
import { findOnPath, freePort, stopChild } from "./local-process.js";

/** A single-member etcd the benchmark started, and how to stop it. */
export interface EtcdProcess {
  /** `host:port` of its client (gRPC) endpoint. */
  readonly endpoint: string;
  readonly version: string;
  /** The etcd process's id, for its CPU time from /proc. */
  readonly pid: number;
  stop(): Promise<void>;
}

/**
 * The `etcd` binary on PATH (Debian's `etcd-server` puts it in /usr/bin), or undefined when there
 * is none: the peer is then skipped and the run says so.
 */
export function findEtcd(): string | undefined {
  return findOnPath("etcd");
}

/**
 * Start `binary` as a one-member cluster on free loopback ports with a fresh data directory under
 * the system temp dir, and wait (up to 15 s) until it answers a read. Its defaults are kept, fsync
 * of the write-ahead log on every commit included: that is what etcd is. `stop()` ends the process
 * and deletes the data directory; a start that fails cleans up the same way before it throws.
 */
export async function startEtcd(binary: string): Promise<EtcdProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), "leasehold-bench-etcd-"));
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const client = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const child = spawn(
    binary,
    [
      "--name",
      "bench",
      "--data-dir",
      dataDir,
      "--listen-client-urls",
      client,
      "--advertise-client-urls",
      client,
      "--listen-peer-urls",
      peer,
      "--initial-advertise-peer-urls",
      peer,
      "--initial-cluster",
      `bench=${peer}`,
      "--log-level",
      "error",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  child.stderr!.setEncoding("utf8");
  child.stderr!.on("data", (chunk: string) => (stderr = (stderr + chunk).slice(-2_000)));
  const stop = async (): Promise<void> => {
    await stopChild(child);
    rmSync(dataDir, { recursive: true, force: true });
  };
  const probe = new Etcd3({ hosts: `127.0.0.1:${clientPort}` });
  try {
    const deadline = performance.now() + 15_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`etcd exited with ${child.exitCode}: ${stderr.trim()}`);
      try {
        const status = await probe.maintenance.status();
        return { endpoint: `127.0.0.1:${clientPort}`, version: status.version, pid: child.pid!, stop };
      } catch (err) {
        if (performance.now() > deadline) throw new Error(`etcd did not answer within 15 s: ${(err as Error).message}; ${stderr.trim()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  } catch (err) {
    await stop();
    throw err;
  } finally {
    probe.close();
  }
}
