import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { Suite } from "../figures.js";
import { round } from "../stats.js";

const probe = fileURLToPath(new URL("../memory-probe.js", import.meta.url));

/** `memory_bytes_per_held_lock` at 1,000,000 held locks, measured in a fresh child process. */
export const memorySuite: Suite = {
  name: "memory",
  description: "heap bytes per held lock at 1,000,000 held locks",
  async run(ctx) {
    const count = 1_000_000;
    const { stdout } = await promisify(execFile)(process.execPath, ["--expose-gc", "--max-old-space-size=8192", probe, String(count)], {
      maxBuffer: 1 << 20,
    });
    const result = JSON.parse(stdout.trim()) as { bytesPerLock: number; heapBytes: number };
    ctx.progress(`memory: ${result.bytesPerLock.toFixed(0)} bytes per held lock (heap ${(result.heapBytes / 2 ** 20).toFixed(0)} MiB)`);
    return [
      {
        name: "memory_bytes_per_held_lock",
        value: round(result.bytesPerLock, 0),
        unit: "bytes",
        command: ctx.command,
        quick: ctx.quick,
        note: "1,000,000 exclusive single-descriptor locks (17-byte row descriptors) held in one engine; heap growth after forced GC",
      },
    ];
  },
};
