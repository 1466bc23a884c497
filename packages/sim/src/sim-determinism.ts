import { createRequire, syncBuiltinESMExports } from "node:module";
import type { SimRandom } from "./sim-random.js";

/** Whether this machine stores a 32-bit word least significant byte first (x86 and arm64 do). */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
/** node:crypto's CommonJS exports object: writable, and `syncBuiltinESMExports` copies it to the ES module's named exports. */
const crypto = createRequire(import.meta.url)("node:crypto") as typeof import("node:crypto");

/**
 * Make the randomness the server code draws (tokens, leader ids, incarnations, stream ids, the
 * activity feed's sampling) come from the seed for the length of one run, so a seed replays the
 * same run: node:crypto's `randomUUID`, `randomBytes` and `randomFillSync`, the Web Crypto
 * `randomUUID` and `Math.random`. Answers the function that puts the real ones back.
 */
export function seedRandomness(random: SimRandom): () => void {
  const real = { randomUUID: crypto.randomUUID, randomBytes: crypto.randomBytes, randomFillSync: crypto.randomFillSync, webUUID: globalThis.crypto.randomUUID, mathRandom: Math.random };
  const fill = <T extends NodeJS.ArrayBufferView>(view: T): T => {
    const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
    // Four bytes per draw, least significant first: a lock table's token pool (72 KiB) is filled
    // at its first token. Whole words go through a 32-bit view where the offset allows it (the
    // same bytes on a little-endian machine, a quarter of the stores); the rest byte by byte.
    let i = 0;
    if (LITTLE_ENDIAN && bytes.byteOffset % 4 === 0) {
      const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length >>> 2);
      for (let w = 0; w < words.length; w++) words[w] = random.u32();
      i = words.length * 4;
    }
    for (; i < bytes.length; i += 4) {
      const word = random.u32();
      for (let k = 0; k < 4 && i + k < bytes.length; k++) bytes[i + k] = (word >>> (8 * k)) & 0xff;
    }
    return view;
  };
  const uuid = (): `${string}-${string}-${string}-${string}-${string}` => {
    const b = fill(new Uint8Array(16));
    b[6] = (b[6]! & 0x0f) | 0x40;
    b[8] = (b[8]! & 0x3f) | 0x80;
    const h = Buffer.from(b).toString("hex");
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  };
  const mutable = crypto as unknown as Record<string, unknown>;
  mutable.randomUUID = uuid;
  mutable.randomBytes = (size: number) => fill(Buffer.alloc(size));
  mutable.randomFillSync = (view: NodeJS.ArrayBufferView, offset = 0, size?: number) => {
    const bytes = new Uint8Array(view.buffer, view.byteOffset + offset, size ?? view.byteLength - offset);
    fill(bytes);
    return view;
  };
  Object.defineProperty(globalThis.crypto, "randomUUID", { value: uuid, configurable: true, writable: true });
  Math.random = () => random.float();
  syncBuiltinESMExports();
  return () => {
    mutable.randomUUID = real.randomUUID;
    mutable.randomBytes = real.randomBytes;
    mutable.randomFillSync = real.randomFillSync;
    Object.defineProperty(globalThis.crypto, "randomUUID", { value: real.webUUID, configurable: true, writable: true });
    Math.random = real.mathRandom;
    syncBuiltinESMExports();
  };
}

/**
 * While a run lasts, a server's code that reaches for Node's own timers instead of its process's
 * clock would run outside the seeded order: those calls throw, naming what was called, so a
 * decision that bypasses the ports is found by the first seed that reaches it. Answers the undo.
 */
export function forbidRealTimers(): () => void {
  const real = { setTimeout: globalThis.setTimeout, setInterval: globalThis.setInterval };
  const forbidden = (name: string) => () => {
    const err = new Error(`${name} called during a simulated run: cluster code must set timers through its ProcessClock`);
    if (process.env.LEASEHOLD_SIM_DEBUG === "1") process.stderr.write(`${err.stack}\n`);
    throw err;
  };
  globalThis.setTimeout = forbidden("setTimeout") as unknown as typeof setTimeout;
  globalThis.setInterval = forbidden("setInterval") as unknown as typeof setInterval;
  return () => {
    globalThis.setTimeout = real.setTimeout;
    globalThis.setInterval = real.setInterval;
  };
}

/**
 * While a run lasts, errors record no stack (the server code throws and catches thousands of
 * `LeaseholdError`s a run: NOT_LEADER, handed over, timeouts; capturing their stacks was a twentieth
 * of the simulator's time). Nothing in a run reads a stack; set LEASEHOLD_SIM_DEBUG=1 to keep them
 * for a replay under a debugger. Answers the undo.
 */
export function skipStackTraces(): () => void {
  if (process.env.LEASEHOLD_SIM_DEBUG === "1") return () => {};
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  return () => {
    Error.stackTraceLimit = limit;
  };
}
