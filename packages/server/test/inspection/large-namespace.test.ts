import { responseValidators, type DescriptorsPage } from "@leasehold/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/start-server.js";
import { get, post } from "./inspection-fixture.js";

const HELD = 100_000;
const PER_REQUEST = 10_000;

let server: RunningServer;
beforeAll(async () => {
  server = await startServer({ leaseMs: 600_000 });
  // Ten requests of 10,000 descriptors each, shuffled so the table's insertion order is not the
  // descriptor order the pages must come in.
  const names = Array.from({ length: HELD }, (_, i) => `item-${String(i).padStart(6, "0")}`);
  for (let i = names.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [names[i], names[j]] = [names[j]!, names[i]!];
  }
  for (let i = 0; i < HELD; i += PER_REQUEST) {
    const res = await post(server.url, "large", "lock", { locks: names.slice(i, i + PER_REQUEST).map((descriptor) => ({ descriptor, mode: "exclusive" })), clientDescription: `loader ${i / PER_REQUEST}` });
    expect(res.status).toBe(200);
  }
}, 120_000);
afterAll(() => server.close());

describe("a namespace of 100,000 held locks", () => {
  it("pages through every descriptor exactly once, in order, at most `limit` per page", async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await get(server.url, `/v1/namespaces/large/locks?limit=1000${cursor === undefined ? "" : `&cursor=${cursor}`}`);
      expect(res.status).toBe(200);
      const page = responseValidators.locks.parse(res.json) as DescriptorsPage;
      expect(page.descriptors.length).toBeLessThanOrEqual(1000);
      expect(page.summary).toMatchObject({ heldLocks: HELD, heldTokens: HELD / PER_REQUEST });
      // Plain checks: a hundred thousand expect() calls would cost more than the server's work.
      const withOneHolder = page.descriptors.filter((d) => d.holders.length === 1 && d.holderCount === 1);
      expect(withOneHolder.length).toBe(page.descriptors.length);
      for (const d of page.descriptors) seen.push(d.descriptor);
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== undefined);
    expect(pages).toBe(HELD / 1000);
    expect(seen).toHaveLength(HELD);
    expect(seen.every((d, i) => i === 0 || seen[i - 1]! < d)).toBe(true);
  }, 120_000);

  it("answers a prefix page and a page from any descriptor with its holder's description", async () => {
    const prefixed = responseValidators.locks.parse((await get(server.url, "/v1/namespaces/large/locks?prefix=item-0999")).json) as DescriptorsPage;
    expect(prefixed.descriptors.map((d) => d.descriptor)).toEqual(Array.from({ length: 100 }, (_, i) => `item-0999${String(i).padStart(2, "0")}`));
    expect(prefixed.nextCursor).toBeUndefined();
    for (const d of prefixed.descriptors) expect(d.holders[0]!.clientDescription).toMatch(/^loader \d$/);
    const tail = responseValidators.locks.parse((await get(server.url, "/v1/namespaces/large/locks?cursor=item-099997")).json) as DescriptorsPage;
    expect(tail.descriptors.map((d) => d.descriptor)).toEqual(["item-099998", "item-099999"]);
  });
});
