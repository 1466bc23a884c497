#!/usr/bin/env node
import { pino } from "pino";
import { HELP, parseCliOptions, UsageError, type CliOptions } from "./cli-options.js";
import { startServer } from "./start-server.js";

async function main(argv: readonly string[]): Promise<number> {
  let options: CliOptions;
  try {
    options = parseCliOptions(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`leasehold-server: ${err.message}\nRun leasehold-server --help for every option.\n`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(HELP);
    return 0;
  }
  // Synchronous stdout writes: the last lines before exit are never lost.
  const logger = pino({ level: options.logLevel, base: { pid: process.pid } }, pino.destination({ dest: 1, sync: true }));
  if (options.dataDir === undefined) {
    logger.warn("no --data-dir: timestamps and fencing tokens restart at 1 with the process");
  }
  const server = await startServer({
    host: options.host,
    port: options.port,
    dataDir: options.dataDir,
    leaseMs: options.leaseMs,
    logger,
  });
  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals): void => {
      if (stopping) {
        logger.warn({ signal }, "second signal: exiting without waiting for the graceful stop");
        resolve(1);
        return;
      }
      stopping = true;
      logger.info({ signal }, "stopping");
      server.close().then(
        () => resolve(0),
        (err: unknown) => {
          logger.error({ err }, "graceful stop failed");
          resolve(1);
        },
      );
    };
    process.on("SIGTERM", stop);
    process.on("SIGINT", stop);
  });
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`leasehold-server: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
