/**
 * The part of redlock 4.2.0's API the peer benchmarks use (CommonJS: Node hands its
 * `module.exports` to an ESM default import, hence `export default`). redlock 4 ships no types, and
 * `@types/redlock` pulls in `@types/ioredis` 4, which clashes with ioredis 6's own types.
 */
declare module "redlock" {
  /** A held lock; `unlock` runs redlock's compare-and-delete script on every server. */
  interface RedlockLock {
    readonly resource: string;
    readonly value: string;
    unlock(): Promise<unknown>;
  }
  /** Options of the `Redlock` constructor (redlock 4 defaults: 10 retries, 200 ms ± 100 ms apart). */
  interface RedlockOptions {
    readonly driftFactor?: number | undefined;
    readonly retryCount?: number | undefined;
    readonly retryDelay?: number | undefined;
    readonly retryJitter?: number | undefined;
  }
  /** Anything with ioredis's callback-style `eval` and `evalsha`. */
  interface RedlockClient {
    eval(...args: unknown[]): unknown;
    evalsha(...args: unknown[]): unknown;
  }
  class Redlock {
    constructor(clients: readonly RedlockClient[], options?: RedlockOptions);
    lock(resource: string, ttlMs: number): Promise<RedlockLock>;
  }
  export default Redlock;
}
