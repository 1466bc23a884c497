/**
 * The profiles docs/benchmarks.md quotes, in order: before the issue 6 performance work, after the
 * first round of it (session 2), and after compact batch answers and the chained first poll.
 */
export const PROFILE_LABELS = ["before", "after", "compact"] as const;

/** What the "Profiles" section of docs/benchmarks.md says around the two tables. */
export const PROFILES_INTRO = [
  "`pnpm bench:profile <label>` runs the peers suite's c64 workload (64 callers, lock + `tryUnlock`, lock batching on)",
  "against the CLI server started with `node --cpu-prof`, profiles the client in the same run with the inspector, and",
  "writes the top frames by self time. `(idle)` is time the process waited for the other side. \"before\" is the",
  "state at the start of the issue 6 performance work (lock batching opt-in and already on for this workload);",
  "\"after\" is after the first round of changes below, \"compact\" after the last two (compact answers, chained",
  "first poll), which is the current code. What the profiles showed and what was changed because of them:",
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
  "- **Server: `nestingDepth`, 3% of its busy time.** The scan that refuses bodies nested over 32 levels walked",
  "  every character; it now skips strings with `indexOf` (2.5 times faster on batch bodies, checked against a",
  "  depth oracle by a property test).",
  "- **Client: `parseLine`, 18% of its time in \"after\".** `JSON.parse` of each ~210-byte grant line (0.7 µs",
  "  measured alone) plus its schema check, though only the token and the fencing token were news to the client.",
  "  The client now sends `compact: true` and the server answers a full grant as",
  "  `{\"index\",\"token\",\"fencingTokens\"}` after one lease line (about 60 bytes; docs/protocol.md, ADR 0005);",
  "  the client rebuilds the full answer from the entry it sent. The server's `onResult` fell from 14.5% to about",
  "  4% with it (a template instead of `JSON.stringify` of the whole answer).",
  "- **Client: two async frames per lock.** `LockClient.lock` awaited `acquireLocks`, which awaited the batcher:",
  "  each frame is a promise and a microtask hop per lock (`runMicrotasks` 5–6%). The first poll is now chained",
  "  with `then`; only waits that need a second poll run in an async loop.",
  "- **What is left** is mostly the cost of the transport: `writev` (the socket write of each request, which on",
  "  this virtual machine includes waking the other process), `JSON.stringify` of each batch's entries (about",
  "  0.25 µs per entry) and undici's request path on the client. The server's lock engine itself (`lock`,",
  "  `grant`, `unlock`) is a few percent.",
].join("\n");
