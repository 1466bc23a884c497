import { readFileSync } from "node:fs";

/** Clock ticks per second of `/proc/<pid>/stat` (`getconf CLK_TCK`: 100 on Linux everywhere we run). */
const TICKS_PER_S = 100;

/**
 * CPU time (user + system, ms) process `pid` has used so far, from `/proc/<pid>/stat` (Linux only;
 * 10 ms resolution, so measure over seconds). Throws when the process is gone.
 */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name, which is in parentheses and may hold spaces: state is field 3,
  // utime field 14 and stime field 15 (1-based), so 11 and 12 after the name.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_S;
}
