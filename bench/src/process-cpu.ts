import { readFileSync } from "node:fs";

/** Clock ticks per second of `/proc/<pid>/stat`'s times (USER_HZ, 100 on Linux). */
const TICKS_PER_S = 100;

/**
 * CPU time (user + system) of process `pid` so far, in µs, from `/proc/<pid>/stat` (Linux; NaN
 * elsewhere or once the process is gone). Resolution 10 ms: read it around spans of seconds.
 */
export function cpuUsOf(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after the command name.
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / TICKS_PER_S;
  } catch {
    return Number.NaN;
  }
}

/** CPU time (user + system) of this process so far, in µs. */
export function selfCpuUs(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/** CPU time (user + system) of process `pid` so far, in ms (see {@link cpuUsOf}). Throws when the process is gone. */
export function cpuMs(pid: number): number {
  const us = cpuUsOf(pid);
  if (Number.isNaN(us)) throw new Error(`no /proc/${pid}/stat: the process is gone (or this is not Linux)`);
  return us / 1000;
}
