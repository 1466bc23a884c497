import { randomFillSync } from "node:crypto";

/** Where lock tokens come from. Injected so tests can use predictable tokens. */
export interface TokenSource {
  /** A new token, never returned before. */
  next(): string;
}

/** Bytes of randomness per token: 144 bits, which encode to exactly 24 base64url characters. */
const TOKEN_BYTES = 18;
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const CODES = Uint8Array.from(ALPHABET, (c) => c.charCodeAt(0));

/** Tokens in a source's first pool: a lock table that mints a handful of tokens fills 288 bytes, not the whole pool. */
const FIRST_POOL_TOKENS = 16;

/**
 * Tokens of 144 random bits as 24 base64url characters, cut from a pool refilled by one
 * `randomFillSync` call per pool of tokens: one system call per few thousand grants instead of one
 * per grant keeps token minting off the profile of the lock fast path.
 *
 * The pool starts at 16 tokens and grows four times over at each refill up to `poolTokens`, so a
 * lock table that mints few tokens (one per namespace, and a cluster's term, replica and promoted
 * tables) neither holds nor fills 72 KiB for them, while a busy one reaches the full pool after
 * four small refills.
 *
 * The encoding is done here rather than with `Buffer#toString("base64url", …)`: one
 * `String.fromCharCode` of 24 codes makes a flat string in about a third of the time of the
 * native call for so short an input, and (unlike slicing one long encoded string) never pins the
 * memory of the rest of the pool to a long-lived token.
 *
 * @param poolTokens Tokens per refill once grown. Default 4,096 (72 KiB): large enough to amortise
 *   the call, small enough to stay in cache.
 * @param fill What fills a pool with random bytes. Default node:crypto's `randomFillSync`; a test
 *   passes its own to see the refills.
 */
export function createRandomTokenSource(poolTokens = 4096, fill: (pool: Uint8Array) => unknown = randomFillSync): TokenSource {
  const fullBytes = TOKEN_BYTES * poolTokens;
  let pool = new Uint8Array(Math.min(fullBytes, TOKEN_BYTES * FIRST_POOL_TOKENS));
  let offset = pool.length;
  let filled = false;
  return {
    next(): string {
      if (offset === pool.length) {
        if (filled && pool.length < fullBytes) pool = new Uint8Array(Math.min(fullBytes, pool.length * 4));
        fill(pool);
        filled = true;
        offset = 0;
      }
      const o = offset;
      offset += TOKEN_BYTES;
      return encode(pool, o);
    },
  };
}

/** Base64url of the 18 bytes at `o`: six 24-bit groups, four characters each. */
function encode(b: Uint8Array, o: number): string {
  const n0 = ((b[o] as number) << 16) | ((b[o + 1] as number) << 8) | (b[o + 2] as number);
  const n1 = ((b[o + 3] as number) << 16) | ((b[o + 4] as number) << 8) | (b[o + 5] as number);
  const n2 = ((b[o + 6] as number) << 16) | ((b[o + 7] as number) << 8) | (b[o + 8] as number);
  const n3 = ((b[o + 9] as number) << 16) | ((b[o + 10] as number) << 8) | (b[o + 11] as number);
  const n4 = ((b[o + 12] as number) << 16) | ((b[o + 13] as number) << 8) | (b[o + 14] as number);
  const n5 = ((b[o + 15] as number) << 16) | ((b[o + 16] as number) << 8) | (b[o + 17] as number);
  const c = CODES;
  return String.fromCharCode(
    c[n0 >> 18] as number, c[(n0 >> 12) & 63] as number, c[(n0 >> 6) & 63] as number, c[n0 & 63] as number,
    c[n1 >> 18] as number, c[(n1 >> 12) & 63] as number, c[(n1 >> 6) & 63] as number, c[n1 & 63] as number,
    c[n2 >> 18] as number, c[(n2 >> 12) & 63] as number, c[(n2 >> 6) & 63] as number, c[n2 & 63] as number,
    c[n3 >> 18] as number, c[(n3 >> 12) & 63] as number, c[(n3 >> 6) & 63] as number, c[n3 & 63] as number,
    c[n4 >> 18] as number, c[(n4 >> 12) & 63] as number, c[(n4 >> 6) & 63] as number, c[n4 & 63] as number,
    c[n5 >> 18] as number, c[(n5 >> 12) & 63] as number, c[(n5 >> 6) & 63] as number, c[n5 & 63] as number,
  );
}

/** Predictable tokens `t1`, `t2`, … for tests. Never use outside tests: they are guessable. */
export function createCountingTokenSource(prefix = "t"): TokenSource {
  let n = 0;
  return { next: () => `${prefix}${++n}` };
}
