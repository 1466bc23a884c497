import fc from "fast-check";
import { expect } from "vitest";
import { encode, exchange, jsonOf, type Answer } from "./exchange.js";
import type { Harness } from "./harness.js";
import { outcomeOf } from "./security-tally.js";
import { seedParameter } from "../../../src/seed-parameter.js";

/** Check name in the report. */
export const RATE_CHECK = "rate limit flood";

/** A flood request and what it is answered when it is admitted. */
interface FloodRequest {
  readonly what: string;
  readonly bytes: Buffer;
  readonly admittedStatus: number;
}

function floodRequests(h: Harness): fc.Arbitrary<FloodRequest> {
  const bearer = `Bearer ${h.secrets.admin}`;
  return fc.oneof(
    fc.constant({ what: "GET /v1/health", bytes: encode({ method: "GET", target: "/v1/health", headers: [] }), admittedStatus: 200 }),
    fc.constant({ what: "GET /metrics with the * token", bytes: encode({ method: "GET", target: "/metrics", headers: [["authorization", bearer]] }), admittedStatus: 200 }),
    fc.constant({ what: "GET /metrics without a token", bytes: encode({ method: "GET", target: "/metrics", headers: [] }), admittedStatus: 401 }),
    fc.integer({ min: 1, max: 100 }).map((count) => ({ what: "timestamps with the * token", bytes: encode({ method: "POST", target: "/v1/namespaces/flood/timestamps", headers: [["content-type", "application/json"], ["authorization", bearer]], body: JSON.stringify({ count }) }), admittedStatus: 200 })),
    fc.constant({ what: "timestamps without a token", bytes: encode({ method: "POST", target: "/v1/namespaces/flood/timestamps", headers: [["content-type", "application/json"]], body: '{"count":1}' }), admittedStatus: 401 }),
    fc.constant({ what: "broken JSON with the * token", bytes: encode({ method: "POST", target: "/v1/namespaces/flood/lock", headers: [["content-type", "application/json"], ["authorization", bearer]], body: "{" }), admittedStatus: 400 }),
    fc.constant({ what: "an unknown path", bytes: encode({ method: "GET", target: "/nowhere", headers: [] }), admittedStatus: 404 }),
    fc.constant({ what: "GET on an operation with the * token", bytes: encode({ method: "GET", target: "/v1/namespaces/flood/lock", headers: [["authorization", bearer]] }), admittedStatus: 405 }),
  );
}

/** The documented 429 of the rate limit: error body, details, and a `retry-after` equal to `retryAfterSeconds`. */
function expectRateRefusal(answer: Answer, rate: number, context: string): void {
  const body = jsonOf(answer) as { error?: { code?: string; message?: string; details?: Record<string, unknown> } } | undefined;
  expect(body?.error?.code, context).toBe("TOO_MANY_REQUESTS");
  expect(body?.error?.message, context).toContain(`rateLimit ${rate}`);
  const wait = body?.error?.details?.retryAfterSeconds;
  expect(body?.error?.details, context).toEqual({ limit: "rateLimit", value: rate, retryAfterSeconds: wait });
  expect(Number.isInteger(wait) && (wait as number) >= 1, `${context}: retryAfterSeconds ${String(wait)}`).toBe(true);
  expect(answer.headers["retry-after"], context).toBe(String(wait));
  expect(answer.headers["content-type"], context).toMatch(/^application\/json/);
}

/**
 * A flood of `count` generated requests (any route, with and without tokens) from one fresh client
 * address, `concurrency` at a time. The token bucket holds one second's worth (`rate`) and refills
 * at `rate`/s, so: at least `rate` are admitted, at most `rate × (1 + seconds) + 1`; every other one
 * gets the documented 429 (checked before authentication, so even unauthenticated requests get it);
 * an admitted one gets its ordinary answer. Afterwards another address is served at once, and the
 * flooding address again after `retry-after` seconds.
 */
export async function runRateFlood(h: Harness, rate: number, count: number, seed: number | undefined): Promise<void> {
  const flooder = "127.0.3.1";
  const requests = fc.sample(floodRequests(h), { numRuns: count, ...seedParameter(seed) });
  const answers: { request: FloodRequest; answer: Answer }[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < requests.length) {
        const request = requests[next++] as FloodRequest;
        answers.push({ request, answer: await exchange(h.server.port, request.bytes, { localAddress: flooder }) });
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  let admitted = 0;
  let refused = 0;
  let retryAfter = 1;
  try {
    for (const { request, answer } of answers) {
      h.tally.record(RATE_CHECK, outcomeOf(answer.status, answer.body), 1, 1);
      expect(answer.timedOut, request.what).toBe(false);
      if (answer.status === 429) {
        refused++;
        expectRateRefusal(answer, rate, request.what);
        retryAfter = Math.max(retryAfter, Number(answer.headers["retry-after"]));
      } else {
        admitted++;
        expect(answer.status, `${request.what}, admitted`).toBe(request.admittedStatus);
      }
    }
    const bound = Math.floor(rate * (1 + seconds)) + 1;
    expect(admitted, "the burst of one second's worth was not admitted").toBeGreaterThanOrEqual(Math.min(rate, count));
    expect(admitted, `admitted more than the bucket allows in ${seconds.toFixed(2)} s`).toBeLessThanOrEqual(bound);
    expect(refused, `a flood of ${count} in ${seconds.toFixed(2)} s was never refused`).toBeGreaterThan(0);
    h.tally.observations.push(
      `Rate limit ${rate}/s: a flood of ${count} requests from one address (8 at a time) took ${seconds.toFixed(2)} s; ${admitted} were admitted (at least ${rate}, the burst; at most ${bound}, the bucket's bound) and ${refused} got 429 \`TOO_MANY_REQUESTS\` with \`retry-after: ${retryAfter}\` and \`details.retryAfterSeconds\` equal to it.`,
    );

    // Per address: another client is served at once; the flooder again once retry-after has passed.
    const other = await exchange(h.server.port, encode({ method: "GET", target: "/v1/health", headers: [] }), { localAddress: "127.0.3.2" });
    h.tally.record(RATE_CHECK, `another address right after the flood: ${outcomeOf(other.status, other.body)}`, 1, 0);
    expect(other.status, "another address was refused during the flood").toBe(200);
    await new Promise((r) => setTimeout(r, retryAfter * 1000 + 50));
    const again = await exchange(h.server.port, encode({ method: "GET", target: "/v1/health", headers: [] }), { localAddress: flooder });
    h.tally.record(RATE_CHECK, `the flooder after retry-after: ${outcomeOf(again.status, again.body)}`, 1, 0);
    expect(again.status, "the flooder was still refused after retry-after").toBe(200);
  } catch (err) {
    h.tally.violation(RATE_CHECK);
    throw err;
  }
}
