import { responseValidators } from "@leasehold/protocol";
import fc from "fast-check";
import { expect } from "vitest";
import { jsonOf, type Answer } from "./exchange.js";
import type { Harness } from "./harness.js";
import { lockState } from "./metrics-text.js";
import { outcomeOf } from "./security-tally.js";
import { seedParameter } from "../../../src/seed-parameter.js";

/** Check name in the report. */
export const WAITING_CHECK = "waiting limit per namespace";

const NAMESPACE = "queue";
const HELD = "q";

/** One lock request that would have to wait on the held descriptor (and may name free ones too). */
function waitingEntry(unique: () => number): fc.Arbitrary<Record<string, unknown>> {
  return fc
    .record({
      mode: fc.constantFrom("exclusive", "shared", "permit"),
      others: fc.integer({ min: 0, max: 3 }),
      acquireTimeoutMs: fc.integer({ min: 1, max: 60_000 }),
      withRequestId: fc.boolean(),
      clientDescription: fc.option(fc.string({ maxLength: 20 }), { nil: undefined }),
    })
    .map(({ mode, others, acquireTimeoutMs, withRequestId, clientDescription }) => {
      const u = unique();
      const held = mode === "permit" ? { descriptor: HELD, mode, limit: 3 } : { descriptor: HELD, mode };
      const free = Array.from({ length: others }, (_, i) => ({ descriptor: `free-${u}-${i}`, mode: "exclusive" }));
      return {
        ...(withRequestId ? { requestId: `over-${u}` } : {}),
        locks: [...free, held],
        acquireTimeoutMs,
        ...(clientDescription === undefined ? {} : { clientDescription }),
      };
    });
}

/** `200, lines: TOO_MANY_REQUESTS`: the status of a lock-batch answer and the error codes on its lines. */
function batchOutcome(answer: Answer): string {
  const codes = new Set<string>();
  for (const line of answer.body.toString("utf8").split("\n")) {
    if (line === "") continue;
    try {
      const parsed = JSON.parse(line) as { error?: { code?: string }; result?: { status?: string } };
      codes.add(parsed.error?.code ?? parsed.result?.status ?? "?");
    } catch {
      codes.add("(not JSON)");
    }
  }
  return `${String(answer.status)}, lines: ${[...codes].join(", ")}`;
}

/** The documented 429 of the waiting limit. */
function expectWaitingRefusal(error: unknown, limit: number, context: string): void {
  const e = error as { code?: string; message?: string; details?: unknown } | undefined;
  expect(e?.code, context).toBe("TOO_MANY_REQUESTS");
  expect(e?.message, context).toContain(`maxWaitingPerNamespace ${limit}`);
  expect(e?.details, context).toEqual({ limit: "maxWaitingPerNamespace", value: limit });
}

/**
 * With `limit` lock requests waiting in one namespace (behind a held exclusive lock), generated
 * requests that would have to wait — single `lock`s in any conflicting mode, with or without
 * `requestId`, and `lock-batch` entries — are refused with 429 `TOO_MANY_REQUESTS` (a batch entry
 * on its NDJSON line) and change nothing: the lock table's metrics are equal before and after
 * each. Then the controls the documentation promises: a refused `requestId` left nothing behind, a
 * grantable request and a non-waiting one still pass, another namespace still queues. Finally the
 * holder releases and the waiters are served one by one, in the order they queued.
 */
export async function runWaitingLimit(h: Harness, limit: number, numRuns: number, seed: number | undefined): Promise<void> {
  const admin = h.secrets.admin;
  const post = (op: string, body: unknown, options = {}): Promise<Answer> => h.post(WAITING_CHECK, NAMESPACE, op, body, admin, options);
  const holder = await h.take(WAITING_CHECK, NAMESPACE, HELD);
  // The holder must outlive the test: refresh it well within the lease.
  const refresher = setInterval(() => void post("refresh", { tokens: [holder] }), 1_000);
  try {
    const order: number[] = [];
    const waiters: Promise<Answer>[] = [];
    for (let i = 0; i < limit; i++) {
      const waiter = post("lock", { requestId: `queued-${i}`, locks: [{ descriptor: HELD, mode: "exclusive" }], acquireTimeoutMs: 60_000 }, { timeoutMs: 70_000 });
      void waiter.then(() => order.push(i));
      waiters.push(waiter);
      await h.waitForSample(WAITING_CHECK, "leasehold_waiting_requests", i + 1);
    }
    const before = lockState(await h.scrape(WAITING_CHECK));
    const refusedIds: string[] = [];
    let unique = 0;
    const entry = waitingEntry(() => unique++);
    const generated = fc.oneof({ arbitrary: entry.map((body) => ({ op: "lock", body })), weight: 3 }, { arbitrary: fc.array(entry, { minLength: 1, maxLength: 3 }).map((requests) => ({ op: "lock-batch", body: { requests } })), weight: 1 });

    await fc.assert(
      fc.asyncProperty(generated, async ({ op, body }) => {
        const entries = op === "lock" ? 1 : (body as { requests: unknown[] }).requests.length;
        const answer = await post(op, body);
        h.tally.record(WAITING_CHECK, `${op}: ${op === "lock" ? outcomeOf(answer.status, answer.body) : batchOutcome(answer)}`, 1, 1);
        const context = `${op} ${JSON.stringify(body).slice(0, 200)} → ${answer.body.toString("utf8").slice(0, 300)}`;
        try {
          if (op === "lock") {
            expect(answer.status, context).toBe(429);
            expectWaitingRefusal((jsonOf(answer) as { error?: unknown } | undefined)?.error, limit, context);
          } else {
            expect(answer.status, context).toBe(200);
            const lines = answer.body.toString("utf8").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as { index: number; error?: unknown });
            expect(lines.map((l) => l.index).sort(), context).toEqual(Array.from({ length: entries }, (_, i) => i));
            for (const line of lines) {
              expect(responseValidators["lock-batch"].check(line), context).toBe(true);
              expectWaitingRefusal(line.error, limit, context);
            }
          }
          const sent = op === "lock" ? [body] : (body as { requests: unknown[] }).requests;
          for (const b of sent) {
            const id = (b as { requestId?: string }).requestId;
            if (id !== undefined) refusedIds.push(id);
          }
          h.tally.extra(WAITING_CHECK, 1);
          expect(lockState(await h.scrape(WAITING_CHECK)), `${context}: the lock table changed`).toEqual(before);
        } catch (err) {
          h.tally.violation(WAITING_CHECK);
          throw err;
        }
      }),
      { numRuns, ...seedParameter(seed), endOnFailure: true },
    );

    try {
      // A refused request left nothing behind: its requestId with another body is no conflict.
      for (const id of refusedIds.slice(0, 5)) {
        const reuse = await post("lock", { requestId: id, locks: [{ descriptor: `after-${id}`, mode: "exclusive" }] });
        h.tally.record(WAITING_CHECK, `control, a refused requestId reused: ${outcomeOf(reuse.status, reuse.body)}`, 1, 0);
        expect((jsonOf(reuse) as { status?: string }).status, reuse.body.toString("utf8")).toBe("acquired");
        await post("unlock", { tokens: [(jsonOf(reuse) as { token: string }).token] });
      }
      const grantable = await post("lock", { locks: [{ descriptor: "free-now", mode: "exclusive" }], acquireTimeoutMs: 5_000 });
      h.tally.record(WAITING_CHECK, `control, grantable at once: ${outcomeOf(grantable.status, grantable.body)}`, 1, 0);
      expect((jsonOf(grantable) as { status?: string }).status).toBe("acquired");
      await post("unlock", { tokens: [(jsonOf(grantable) as { token: string }).token] });
      const noWait = await post("lock", { locks: [{ descriptor: HELD, mode: "exclusive" }], acquireTimeoutMs: 0 });
      h.tally.record(WAITING_CHECK, `control, acquireTimeoutMs 0: ${outcomeOf(noWait.status, noWait.body)}`, 1, 0);
      expect(jsonOf(noWait)).toEqual({ status: "timeout" });
      // Another namespace still queues.
      const elsewhere = await h.take(WAITING_CHECK, `${NAMESPACE}-2`, HELD);
      const queued = h.post(WAITING_CHECK, `${NAMESPACE}-2`, "lock", { requestId: "elsewhere", locks: [{ descriptor: HELD, mode: "exclusive" }], acquireTimeoutMs: 60_000 }, admin, { timeoutMs: 70_000 });
      await h.waitForSample(WAITING_CHECK, "leasehold_waiting_requests", limit + 1);
      await h.post(WAITING_CHECK, `${NAMESPACE}-2`, "unlock", { tokens: [elsewhere] }, admin);
      const served = await queued;
      h.tally.record(WAITING_CHECK, `control, a waiter in another namespace: ${outcomeOf(served.status, served.body)}`, 1, 0);
      expect((jsonOf(served) as { status?: string }).status).toBe("acquired");
      await h.post(WAITING_CHECK, `${NAMESPACE}-2`, "unlock", { tokens: [(jsonOf(served) as { token: string }).token] }, admin);

      // The holder releases: the waiters are served one at a time, in the order they queued.
      await post("unlock", { tokens: [holder] });
      for (let i = 0; i < limit; i++) {
        const answer = await (waiters[i] as Promise<Answer>);
        const json = jsonOf(answer) as { status?: string; token?: string };
        h.tally.record(WAITING_CHECK, `a queued waiter, once the holder released: ${json.status ?? outcomeOf(answer.status, answer.body)}`, 0, 0);
        expect(json.status).toBe("acquired");
        await new Promise((r) => setTimeout(r, 20));
        expect(order, "waiters were served out of order or before their turn").toEqual(Array.from({ length: i + 1 }, (_, k) => k));
        await post("unlock", { tokens: [json.token] });
      }
      h.tally.observations.push(
        `Waiting limit ${limit}: with ${limit} requests waiting in one namespace, ${numRuns} generated requests that would have to wait were refused with 429 and changed nothing; a refused \`requestId\` could be reused, a grantable request, a non-waiting one and a waiter in another namespace passed; the ${limit} waiters were then served in the order they queued.`,
      );
    } catch (err) {
      h.tally.violation(WAITING_CHECK);
      throw err;
    }
  } finally {
    clearInterval(refresher);
  }
}
