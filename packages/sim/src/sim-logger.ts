import pino, { type Logger } from "pino";

/** Hears a line a server logged: its process (the child logger's `server` binding), the line's fields and message. */
export type LineObserver = (server: string, fields: Readonly<Record<string, unknown>>, msg: string) => void;

/**
 * The servers' logger: it writes to stderr only at `LEASEHOLD_SIM_LOG` (a pino level; default
 * `silent`), with the simulated time `now()`, to debug a seed; and it hands every line logged at
 * `info` or above whose message is one of `messages` to `observe` (the sim's observers of the
 * cluster's decisions: sim-balance-target.ts), written or not. Its level is `info` unless
 * `LEASEHOLD_SIM_LOG` asks for more, so the servers' code runs as at `silent`: none of it asks
 * whether `info` is enabled (only `debug` and `trace`, which stay off), and a line neither written
 * nor observed is never formatted.
 */
export function simLogger(now: () => number, messages: ReadonlySet<string>, observe: LineObserver): Logger {
  const wanted = process.env.LEASEHOLD_SIM_LOG ?? "silent";
  const writeFrom = wanted === "silent" ? Infinity : pino.levels.values[wanted];
  if (writeFrom === undefined) throw new RangeError(`LEASEHOLD_SIM_LOG: unknown pino level ${JSON.stringify(wanted)}`);
  const level = writeFrom < pino.levels.values.info! ? wanted : "info";
  return pino(
    {
      level,
      base: null,
      timestamp: () => `,"t":${now().toFixed(1)}`,
      hooks: {
        logMethod(args, method, at) {
          const [fields, msg] = args as unknown[];
          if (typeof msg === "string" && messages.has(msg) && typeof fields === "object" && fields !== null) {
            observe(String((this.bindings() as { server?: unknown }).server), fields as Record<string, unknown>, msg);
          }
          if (at >= writeFrom) method.apply(this, args);
        },
      },
    },
    pino.destination(2),
  );
}
