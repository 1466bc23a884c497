/** The profiles docs/benchmarks.md quotes, in order: before and after the issue 6 work. */
export const PROFILE_LABELS = ["before", "after"] as const;

/** What the "Profiles" section of docs/benchmarks.md says around the two tables. */
export const PROFILES_INTRO = [
  "`pnpm bench:profile <label>` runs the peers suite's c64 workload (64 callers, lock + `tryUnlock`, lock batching on)",
  "against the CLI server started with `node --cpu-prof`, profiles the client in the same run with the inspector, and",
  "writes the top frames by self time. `(idle)` is time the process waited for the other side. \"before\" is the",
  "state at the start of the issue 6 performance work (lock batching opt-in and already on for this workload);",
  "\"after\" is the current code. What the profiles showed and what was changed because of them:",
  "",
  "- **Client: `#enqueue` of the async unlocker, 16.6% self.** Not the enqueue itself: V8 had inlined async-mutex's",
  "  `Semaphore.release`, which walks every weight from the semaphore's value down to 1 on each release looking",
  "  for `waitForUnlock` waiters. The shared/exclusive lock had a full weight of 1,024, so every `tryUnlock` paid",
  "  for a 1,024-step loop. The full weight is now 16 (enqueuers hold the lock for one synchronous insertion; a",
  "  17th waits a microtask); the frame fell to under 2%.",
  "- **Server: `writev` under `onResult`, about a fifth of its busy time.** Each NDJSON line of a batch was its own `res.write`",
  "  (corked, but still a chunk header and a buffer each in the `writev`). Lines answered at once are now one",
  "  string, written with the head, and with the end of the body when every entry was answered at once: one",
  "  socket write per batch.",
  "- **Both processes idle half the time.** With one batch in flight, client and server took turns: the client",
  "  read 64 answers and sent the next 64 requests while the server waited, then the reverse. When nothing is in",
  "  transit and 16 or more requests are queued, the client now sends half and the other half at once, so the",
  "  server grants one while the client reads the other's answers.",
  "- **Client: `randomUUID` per lock (2–3%) and per-call promise bookkeeping in `tryUnlock`.** `requestId`s are",
  "  now a 96-bit random prefix per client and a counter; `tryUnlock` counts enqueues instead of keeping a set",
  "  of promises with `.catch` and `.finally` each.",
  "- **What is left** is mostly the cost of the transport: `writev` (the socket write of each request, which on",
  "  this virtual machine includes waking the other process) and undici's request path on the client, and",
  "  `JSON.parse` of each answer line (`parseLine`, about 0.8 µs per line, measured alone). The server's lock",
  "  engine itself (`lock`, `grant`, `unlock`) is a few percent.",
].join("\n");
