import { cpus, platform, release, totalmem } from "node:os";

/** One line naming the machine a run measured: CPU model, cores, memory, OS and Node version. */
export function describeMachine(): string {
  const cpu = cpus()[0]?.model.trim() ?? "unknown CPU";
  return `${cpu}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ${platform()} ${release()}, Node ${process.version}`;
}
