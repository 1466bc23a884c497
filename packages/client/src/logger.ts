/**
 * Where the client writes its warnings: failed unlocks and refreshes, lost and leaked locks. Token
 * text is never logged. A pino logger satisfies it as it is (`logger: pino()`), and so does any
 * logger with these two methods taking a fields object and a message.
 *
 * Why an interface of our own rather than pino's `Logger` type: the client's public types then do
 * not depend on pino's, so another logger (or another pino major) fits without a type error.
 */
export interface Logger {
  /** Something went wrong that the client survives (a failed refresh, a lost lock). */
  warn(fields: object, message: string): void;
  /** A bug: something that should not happen did, and was contained. */
  error(fields: object, message: string): void;
}
