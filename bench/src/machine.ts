import { cpus, totalmem } from "node:os";

/** A one-line description of this machine, for results and docs. */
export function describeMachine(): string {
  const cpu = cpus();
  const model = (cpu[0]?.model ?? "unknown CPU").replace(/\s+/g, " ").trim();
  return `${cpu.length} cores (${model}), ${Math.round(totalmem() / 2 ** 30)} GiB, ${process.platform} ${process.arch}`;
}
