/**
 * The quick-start tour: an embedded leasehold server on an ephemeral loopback port, driven over
 * real HTTP with plain `fetch`, printing what happens. Run with `pnpm demo`.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer } from "./start-server.js";

type Json = Record<string, unknown>;
interface Granted { status: "acquired"; token: string; acquired: { descriptor: string; mode: string; fencingToken: number }[] }
type LockAnswer = Granted | { status: "timeout" };

const say = (line: string): void => void process.stdout.write(`${line}\n`);

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), "leasehold-demo-"));
  const server = await startServer({ dataDir, leaseMs: 10_000 });
  say(`leasehold server listening on ${server.url} (leader ${server.service.leaderId})\n`);

  const call = async <T>(operation: string, body: Json): Promise<T> => {
    const res = await fetch(`${server.url}/v1/namespaces/demo/${operation}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const answer = (await res.json()) as T;
    if (!res.ok) throw new Error(`${operation} answered ${res.status}: ${JSON.stringify(answer)}`);
    return answer;
  };
  const lock = (locks: Json[], extra: Json = {}): Promise<LockAnswer> => call<LockAnswer>("lock", { locks, ...extra });
  const unlock = (token: string): Promise<unknown> => call("unlock", { tokens: [token] });
  const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
  const fence = (a: LockAnswer): string => (a.status === "acquired" ? a.acquired.map((l) => l.fencingToken).join(", ") : "-");

  say("1. Two workers want the same row exclusively; the second waits in line (first in, first out).");
  const row = { descriptor: "orders\u0000o-17", mode: "exclusive" };
  const a = await lock([row], { clientDescription: "worker-a" });
  say(`   worker-a: ${a.status}, fencing token ${fence(a)}`);
  const started = Date.now();
  const bWaits = lock([row], { acquireTimeoutMs: 5_000, clientDescription: "worker-b" });
  await sleep(300);
  say("   worker-a: done after 300 ms, unlocking");
  if (a.status === "acquired") await unlock(a.token);
  const b = await bWaits;
  say(`   worker-b: ${b.status} after waiting ${Date.now() - started} ms, fencing token ${fence(b)} (higher: a stale worker-a write can be refused)`);
  const impatient = await lock([row], { acquireTimeoutMs: 100 });
  say(`   a third worker willing to wait only 100 ms: ${impatient.status}`);
  if (b.status === "acquired") await unlock(b.token);

  say("\n2. Shared locks: readers share a document, a writer waits for them.");
  const doc = "doc-3";
  const r1 = await lock([{ descriptor: doc, mode: "shared" }]);
  const r2 = await lock([{ descriptor: doc, mode: "shared" }]);
  say(`   reader 1: ${r1.status}, reader 2: ${r2.status}`);
  const w = await lock([{ descriptor: doc, mode: "exclusive" }], { acquireTimeoutMs: 200 });
  say(`   writer with a 200 ms timeout while both read: ${w.status}`);
  for (const r of [r1, r2]) if (r.status === "acquired") await unlock(r.token);

  say("\n3. Permits: at most 2 nightly imports at once.");
  const permit = { descriptor: "job:nightly-import", mode: "permit", limit: 2 };
  const jobs = await Promise.all([1, 2, 3].map(() => lock([permit])));
  jobs.forEach((j, i) => say(`   import ${i + 1}: ${j.status}`));
  for (const j of jobs) if (j.status === "acquired") await unlock(j.token);

  say("\n4. Work queue: claim up to 2 free items, skipping the one someone else holds.");
  const held = await lock([{ descriptor: "item-1", mode: "exclusive" }]);
  const items = ["item-1", "item-2", "item-3", "item-4"].map((descriptor) => ({ descriptor, mode: "exclusive" }));
  const claim = await lock(items, { behavior: "as-many-as-possible", max: 2 });
  say(`   claimed: ${claim.status === "acquired" ? claim.acquired.map((l) => l.descriptor).join(", ") : "nothing"}`);
  for (const c of [held, claim]) if (c.status === "acquired") await unlock(c.token);

  say("\n5. Timestamps: one strictly increasing counter per namespace.");
  const ts = await call<{ start: number; count: number }>("timestamps", { count: 3 });
  say(`   3 fresh timestamps: ${ts.start}, ${ts.start + 1}, ${ts.start + 2}`);

  say("\n6. Transactions: a start timestamp held by an immutable-timestamp lock.");
  const txn = await call<{ immutableTimestamp: number; transactions: { startTimestamp: number; token: string }[] }>("transactions/start", { count: 1 });
  const first = txn.transactions[0];
  say(`   transaction started at ${first?.startTimestamp}; immutable timestamp ${txn.immutableTimestamp}`);
  await call("timestamps", { count: 5 });
  const before = await call<{ immutableTimestamp: number }>("immutable-timestamp", {});
  say(`   while it runs, the immutable timestamp stays at ${before.immutableTimestamp}: older versions it may read are kept`);
  if (first) await unlock(first.token);
  const after = await call<{ immutableTimestamp: number }>("immutable-timestamp", {});
  say(`   after it commits (unlock): ${after.immutableTimestamp}, so versions superseded before that may be swept`);

  await server.close();
  await rm(dataDir, { recursive: true, force: true });
  say("\nServer closed. See docs/protocol.md for the full protocol.");
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`demo failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
