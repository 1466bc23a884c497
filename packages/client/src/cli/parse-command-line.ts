import { parseArgs, type ParseArgsConfig } from "node:util";
import { UsageError } from "./usage-error.js";

/** The option table of one subcommand, as `node:util` `parseArgs` takes it. */
export type CommandOptions = NonNullable<ParseArgsConfig["options"]>;

/** What {@link parseCommandLine} returns: `parseArgs`'s own result type for that option table. */
export type ParsedCommandLine<O extends CommandOptions> = ReturnType<typeof parseArgs<{ args: string[]; strict: true; allowPositionals: true; options: O }>>;

/**
 * Parse a subcommand's own arguments the way every `leasehold` subcommand does: strict (an unknown
 * flag is a mistake, not ignored), positionals allowed (each command says how many it takes), and
 * `parseArgs`'s own complaint turned into a {@link UsageError}, so it is printed with a pointer to
 * `--help` and exit status 2 instead of a stack trace.
 */
export function parseCommandLine<const O extends CommandOptions>(argv: readonly string[], options: O): ParsedCommandLine<O> {
  try {
    return parseArgs({ args: [...argv], strict: true, allowPositionals: true, options });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}
