import { createRequire, syncBuiltinESMExports } from "node:module";
import type { SimRandom } from "./sim-random.js";

/**
 * Make the randomness the server code draws (tokens, leader ids, incarnations, stream ids, the
 * activity feed's sampling) come from the seed for the length of one run, so a seed replays the
 * same run: node:crypto's `randomUUID`, `randomBytes` and `randomFillSync`, the Web Crypto
 * `randomUUID` and `Math.random`. Answers the function that puts the real ones back.
 */
/** node:crypto's CommonJS exports object: writable, and `syncBuiltinESMExports` copies it to the ES module's named exports. */
const crypto = createRequire(import.meta.url)("node:crypto") as typeof import("node:crypto");

export function seedRandomness(random: SimRandom): () => void {
  const real = { randomUUID: crypto.randomUUID, randomBytes: crypto.randomBytes, randomFillSync: crypto.randomFillSync, webUUID: globalThis.crypto.randomUUID, mathRandom: Math.random };
  const fill = <T extends NodeJS.ArrayBufferView>(view: T): T => {
    const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
    // Four bytes per draw: a lock table's token pool (72 KiB) is filled at its first token.
    for (let i = 0; i < bytes.length; i += 4) {
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
