/**
 * Child-process probe for `memory_bytes_per_held_lock`: holds N single-descriptor exclusive locks
 * in a fresh engine and prints the heap growth per lock as JSON. Run with `--expose-gc` so the
 * measurement is taken after full collections.
 */
import { LockEngine } from "@leasehold/server";

const count = Number(process.argv[2] ?? 1_000_000);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with --expose-gc");
const engine = new LockEngine({ leaseMs: 3_600_000 });
// Create the namespace and warm the code paths before the baseline.
const warm = engine.lock("mem", { locks: [{ descriptor: "warm", mode: "exclusive" }] });
if (warm.status === "acquired") engine.unlock("mem", { tokens: [warm.token] });
gc();
gc();
const before = process.memoryUsage().heapUsed;
for (let i = 0; i < count; i++) {
  const res = engine.lock("mem", { locks: [{ descriptor: `orders\u0000${i.toString().padStart(8, "0")}`, mode: "exclusive" }] });
  if (res.status !== "acquired") throw new Error("lock not granted");
}
gc();
gc();
const after = process.memoryUsage().heapUsed;
const held = engine.metrics().heldLocks;
if (held !== count) throw new Error(`expected ${count} held locks, engine reports ${held}`);
process.stdout.write(JSON.stringify({ count, bytesPerLock: (after - before) / count, heapBytes: after }) + "\n");
