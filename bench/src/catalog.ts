/** What a figure means, and the target an issue set for it, for the generated docs. */
export interface FigureInfo {
  readonly section: string;
  readonly meaning: string;
  readonly target?: { readonly op: ">=" | "<="; readonly value: number };
}

/** Every figure the benchmarks produce, by name. Unknown names are still reported, under "Other". */
export const CATALOG: Readonly<Record<string, FigureInfo>> = {
  engine_pairs_per_s_uncontended: {
    section: "Lock engine (in process)",
    meaning:
      "Exclusive lock+unlock pairs per second driving the engine directly in one process, each grant doing everything a real one does: a token from the random pool, a lease entry, a fencing token from the namespace counter, metrics counters. Measures the lock table's own cost with no I/O.",
    target: { op: ">=", value: 1_000_000 },
  },
  engine_pairs_per_s_contended: {
    section: "Lock engine (in process)",
    meaning:
      "64 requesters cycling on 8 exclusive descriptors in one process: most requests queue, and every release hands the lock to the next waiter in FIFO order. Shows the queueing path's cost.",
  },
  memory_bytes_per_held_lock: {
    section: "Lock engine (in process)",
    meaning:
      "Heap bytes per held lock with 1,000,000 single-descriptor locks held at once (heap after a forced GC, minus the heap before, divided by the count). Includes the token, the lease-queue entry, the descriptor's state and the idempotency-free token record.",
    target: { op: "<=", value: 1024 },
  },
  http_pairs_per_s_c64: {
    section: "HTTP server",
    meaning:
      "lock then unlock pairs per second from 64 keep-alive connections in the benchmark process to the CLI server in a child process over loopback. Each pair is two HTTP requests, so the request rate is twice this.",
    target: { op: ">=", value: 10_000 },
  },
};

/** True, false, or undefined when the figure has no target. */
export function meetsTarget(name: string, value: number): boolean | undefined {
  const target = CATALOG[name]?.target;
  if (!target) return undefined;
  return target.op === ">=" ? value >= target.value : value <= target.value;
}
