import { readFileSync } from "node:fs";

/**
 * Resident set size of process `pid` in bytes, read from `/proc/<pid>/status` (Linux): the memory
 * the process really occupies, heap and everything else (sockets' user-space buffers, code).
 * Kernel socket buffers are not in it. Throws where `/proc` does not exist.
 */
export function residentSetBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  if (match?.[1] === undefined) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}
