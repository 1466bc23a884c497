/**
 * A small seeded pseudo-random generator (mulberry32): the same seed gives the same sequence, so a
 * run's fault decisions can be replayed from the seed it printed. Not for cryptography.
 */
export class SeededRandom {
  #state: number;

  /** A generator starting from `seed` (any number; only its low 32 bits are used). */
  constructor(seed: number) {
    this.#state = seed >>> 0;
  }

  /** The next number in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max], both included. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new RangeError("pick: the array is empty");
    return item;
  }
}

/**
 * A seed for one stream of decisions derived from a run's seed and the stream's identity (for
 * example a connection number and a direction), so each stream's decisions depend only on the seed
 * and on which stream it is, not on how the streams' events interleave.
 */
export function deriveSeed(seed: number, ...parts: readonly number[]): number {
  let h = (seed ^ 0x9e3779b9) >>> 0;
  for (const part of parts) {
    h = Math.imul(h ^ (part >>> 0), 0x85ebca6b) >>> 0;
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35) >>> 0;
    h ^= h >>> 16;
  }
  return h >>> 0;
}

/**
 * A seed for a run: the environment variable `name` when set (to replay a failed run with the seed
 * it printed), else a random one.
 */
export function runSeed(name: string): number {
  const given = process.env[name];
  if (given !== undefined && given !== "") {
    const n = Number(given);
    if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`${name} must be a non-negative integer (got ${given})`);
    return n >>> 0;
  }
  return Math.floor(Math.random() * 2 ** 32) >>> 0;
}
