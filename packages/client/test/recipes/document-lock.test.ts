import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readLock, writeLock, type LockClient } from "../../src/index.js";
import { recipeServer, tick, type RecipeServer } from "./support/recipe-server.js";

/**
 * A store with no transactions of its own: a header with `total` and detail rows name → value.
 * Every step awaits, so unlocked readers and writers really interleave.
 */
class DocumentStore {
  readonly #docs = new Map<string, { total: number; details: Map<string, number> }>();

  constructor(ids: readonly string[]) {
    for (const id of ids) this.#docs.set(id, { total: 0, details: new Map() });
  }

  #doc(id: string) {
    const doc = this.#docs.get(id);
    if (doc === undefined) throw new Error(`no document ${id}`);
    return doc;
  }

  async readTotal(id: string): Promise<number> {
    await tick();
    return this.#doc(id).total;
  }

  async readDetail(id: string, name: string): Promise<number | undefined> {
    await tick();
    return this.#doc(id).details.get(name);
  }

  async writeDetail(id: string, name: string, value: number): Promise<void> {
    await tick();
    this.#doc(id).details.set(name, value);
  }

  async deleteDetail(id: string, name: string): Promise<boolean> {
    await tick();
    return this.#doc(id).details.delete(name);
  }

  async writeTotal(id: string, total: number): Promise<void> {
    await tick();
    this.#doc(id).total = total;
  }
}

const DOCS = ["D0", "D1", "D2", "D3", "D4"] as const;
const NAMES = ["N0", "N1", "N2", "N3", "N4"] as const;
const WORKERS = 30;
const ITERATIONS = 50;

const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)]!;

async function sumDetails(store: DocumentStore, id: string): Promise<number> {
  let sum = 0;
  for (const name of NAMES) sum += (await store.readDetail(id, name)) ?? 0;
  return sum;
}

/** How an operation is wrapped: under the recipe's locks, or bare (the negative control). */
interface Locking {
  read(id: string, fn: () => Promise<void>): Promise<void>;
  write(id: string, fn: () => Promise<void>): Promise<void>;
}

async function stress(store: DocumentStore, locking: Locking) {
  const counts = { reads: 0, inconsistentReads: 0, upserts: 0, deletes: 0, nothing: 0, errors: [] as unknown[] };
  const worker = async (): Promise<void> => {
    for (let i = 0; i < ITERATIONS; i++) {
      const id = pick(DOCS);
      const roll = Math.floor(Math.random() * 7);
      try {
        if (roll < 2) {
          await locking.read(id, async () => {
            const total = await store.readTotal(id);
            const sum = await sumDetails(store, id);
            counts.reads++;
            if (total !== sum) counts.inconsistentReads++;
          });
        } else if (roll < 5) {
          await locking.write(id, async () => {
            await store.writeDetail(id, pick(NAMES), Math.floor(Math.random() * 10));
            await store.writeTotal(id, await sumDetails(store, id));
            counts.upserts++;
          });
        } else if (roll < 6) {
          await locking.write(id, async () => {
            await store.deleteDetail(id, pick(NAMES));
            await store.writeTotal(id, await sumDetails(store, id));
            counts.deletes++;
          });
        } else {
          counts.nothing++;
        }
      } catch (err) {
        counts.errors.push(err);
      }
    }
  };
  await Promise.all(Array.from({ length: WORKERS }, worker));
  return counts;
}

function lockedWith(client: LockClient): Locking {
  const expectAcquired = (result: { status: string }): void => {
    if (result.status !== "acquired") throw new Error(`lock ${result.status}`);
  };
  return {
    read: async (id, fn) => expectAcquired(await readLock(client, id, fn)),
    write: async (id, fn) => expectAcquired(await writeLock(client, id, fn)),
  };
}

describe("document locks over HTTP: shared reads, exclusive updates", () => {
  let env: RecipeServer;
  beforeAll(async () => {
    env = await recipeServer({ namespace: "documents" });
  });
  afterAll(() => env.close());

  it(`${WORKERS} workers × ${ITERATIONS} iterations on ${DOCS.length} documents: no inconsistent read, no error`, async () => {
    const store = new DocumentStore(DOCS);
    // Several clients, as several application servers would have.
    const clients = [env.client(), env.client(), env.client()];
    let next = 0;
    const locking: Locking = {
      read: (id, fn) => lockedWith(clients[next++ % clients.length]!).read(id, fn),
      write: (id, fn) => lockedWith(clients[next++ % clients.length]!).write(id, fn),
    };
    const counts = await stress(store, locking);
    expect(counts.errors).toEqual([]);
    expect(counts.inconsistentReads).toBe(0);
    // The run did exercise every path.
    expect(counts.reads).toBeGreaterThan(200);
    expect(counts.upserts).toBeGreaterThan(300);
    expect(counts.deletes).toBeGreaterThan(100);
    expect(counts.reads + counts.upserts + counts.deletes + counts.nothing).toBe(WORKERS * ITERATIONS);
    await Promise.all(clients.map((c) => c.close())); // sends every release queued by withLock
    expect(env.server.service.snapshot("documents").heldTokens).toBe(0);
  });

  it("negative control: the same run without locks finds inconsistent reads", async () => {
    const store = new DocumentStore(DOCS);
    const bare: Locking = { read: (_id, fn) => fn(), write: (_id, fn) => fn() };
    const counts = await stress(store, bare);
    expect(counts.errors).toEqual([]);
    expect(counts.inconsistentReads).toBeGreaterThan(0);
    expect(counts.reads).toBeGreaterThan(200);
  });

  it("readers share a document; a writer waits for them and readers queued after it wait for the writer", async () => {
    const client = env.client();
    const events: string[] = [];
    let releaseReaders!: () => void;
    const readersMayFinish = new Promise<void>((resolve) => (releaseReaders = resolve));
    const readersIn = { count: 0 };
    const reader = (name: string) =>
      readLock(client, "shared-doc", async () => {
        readersIn.count++;
        events.push(`${name} in`);
        await readersMayFinish;
        events.push(`${name} out`);
      });
    const r1 = reader("r1");
    const r2 = reader("r2");
    await expect.poll(() => readersIn.count).toBe(2); // both readers hold it together
    const writer = writeLock(client, "shared-doc", () => void events.push("writer"));
    await expect.poll(() => env.server.service.snapshot("documents").waitingRequests).toBe(1);
    const late = readLock(client, "shared-doc", () => void events.push("late reader"));
    await expect.poll(() => env.server.service.snapshot("documents").waitingRequests).toBe(2);
    releaseReaders();
    await Promise.all([r1, r2, writer, late]);
    expect(events.slice(-2)).toEqual(["writer", "late reader"]);
  });

  it("answers timeout when the document stays locked past acquireTimeoutMs, and never runs the work", async () => {
    const client = env.client();
    let ran = false;
    const outcome = await writeLock(client, "busy-doc", async () => {
      return readLock(client, "busy-doc", { acquireTimeoutMs: 50 }, () => void (ran = true));
    });
    expect(outcome).toMatchObject({ status: "acquired", value: { status: "timeout" } });
    expect(ran).toBe(false);
  });

  it("locks several documents all or none, so crossing updates cannot deadlock", async () => {
    const client = env.client();
    const runs = await Promise.all(
      Array.from({ length: 20 }, (_, i) => writeLock(client, i % 2 === 0 ? ["A", "B"] : ["B", "A"], async () => tick())),
    );
    expect(runs.every((r) => r.status === "acquired")).toBe(true);
  });
});
