import { randomFillSync } from "node:crypto";

/** Where lock tokens come from. Injected so tests can use predictable tokens. */
export interface TokenSource {
  /** A new token, never returned before. */
  next(): string;
}

/** Bytes of randomness per token: 144 bits, which encodes to exactly 24 base64url characters. */
const TOKEN_BYTES = 18;

/**
 * Tokens of 144 random bits as 24 base64url characters, cut from a pool refilled by one
 * `randomFillSync` call per `poolTokens` tokens: one system call per few thousand grants instead
 * of one per grant keeps token minting off the profile of the lock fast path.
 *
 * @param poolTokens Tokens per refill. Default 4,096 (72 KiB): large enough to amortise the call,
 *   small enough to stay in cache.
 */
export function createRandomTokenSource(poolTokens = 4096): TokenSource {
  const pool = Buffer.allocUnsafe(TOKEN_BYTES * poolTokens);
  let offset = pool.length;
  return {
    next(): string {
      if (offset === pool.length) {
        randomFillSync(pool);
        offset = 0;
      }
      const start = offset;
      offset += TOKEN_BYTES;
      // A fresh flat string per token (not a slice of one big string), so a long-lived token never
      // pins the memory of the rest of its pool.
      return pool.toString("base64url", start, offset);
    },
  };
}

/** Predictable tokens `t1`, `t2`, … for tests. Never use outside tests: they are guessable. */
export function createCountingTokenSource(prefix = "t"): TokenSource {
  let n = 0;
  return { next: () => `${prefix}${++n}` };
}
