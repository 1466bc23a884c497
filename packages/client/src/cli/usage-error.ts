/** A command-line mistake: printed to stderr with a pointer to `--help`, exit status 2. */
export class UsageError extends Error {
  override name = "UsageError";
}
