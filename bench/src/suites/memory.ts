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
    const result = JSON.parse(stdout.trim()) as { bytesPerLock: number; heapBytes: number; rateAtTenth: number; rateAtFull: number };
    ctx.progress(`memory: ${result.bytesPerLock.toFixed(0)} bytes per held lock (heap ${(result.heapBytes / 2 ** 20).toFixed(0)} MiB)`);
    ctx.progress(`grant+release: ${Math.round(result.rateAtTenth)} pairs/s with 100,000 held, ${Math.round(result.rateAtFull)} with 1,000,000 held`);
    return [
      {
        name: "memory_bytes_per_held_lock",
        value: round(result.bytesPerLock, 0),
        unit: "bytes",
        command: ctx.command,
        quick: ctx.quick,
        note: "1,000,000 exclusive single-descriptor locks (17-byte row descriptors) held in one engine; heap growth after forced GC",
      },
      {
        name: "engine_pairs_per_s_100k_held",
        value: round(result.rateAtTenth, 0),
        unit: "pairs/s",
        command: ctx.command,
        quick: ctx.quick,
        note: "lock+unlock on 1,024 other keys while 100,000 locks are held, best of 3 × 200,000",
      },
      {
        name: "engine_pairs_per_s_1m_held",
        value: round(result.rateAtFull, 0),
        unit: "pairs/s",
        command: ctx.command,
        quick: ctx.quick,
        note: "the same while 1,000,000 locks are held, same process",
      },
      {
        name: "engine_pairs_ratio_1m_over_100k_held",
        value: round(result.rateAtFull / result.rateAtTenth, 2),
        unit: "ratio",
        command: ctx.command,
        quick: ctx.quick,
        note: "the two above divided: O(n) work would give about 0.1",
      },
    ];
  },
};
