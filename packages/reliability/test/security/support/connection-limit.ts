import fc from "fast-check";
import { expect } from "vitest";
import { refusedCredential, validCredential } from "./credentials.js";
import { encode, exchange, jsonOf, type Answer } from "./exchange.js";
import type { Harness } from "./harness.js";
import { HeldConnection } from "./held-connection.js";
import { credentialHeaders, OPERATIONS } from "./probes.js";
import { outcomeOf } from "./security-tally.js";
import { SourceAddresses } from "./source-addresses.js";
import { seedParameter } from "../../../src/seed-parameter.js";

/** Check name in the report. */
export const CONNECTION_CHECK = "connection limit";

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Open `limit` keep-alive connections and have each served once (`GET /v1/health` → 200). A
 * connection of an earlier test the server has not yet seen close can still hold a slot; then one
 * of ours is refused, and the attempt is repeated (up to 10 times) after closing them all.
 */
async function fillSlots(port: number, limit: number): Promise<HeldConnection[]> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const held: HeldConnection[] = [];
    for (let i = 0; i < limit; i++) held.push(await HeldConnection.open(port, `127.0.4.${i + 1}`));
    const statuses = await Promise.all(held.map((c) => c.ping()));
    if (statuses.every((s) => s === 200)) return held;
    for (const c of held) c.close();
    await sleep(300);
  }
  throw new Error(`could not hold ${limit} connections that were all served`);
}

/** The documented answer beyond the connection limit: 503 `UNAVAILABLE`, `retry-after: 1`, `connection: close`, then the close. */
function expectOverLimit(answer: Answer, limit: number, context: string): void {
  expect(answer.status, `${context}: ${answer.body.toString("utf8").slice(0, 300)}`).toBe(503);
  const body = jsonOf(answer) as { error?: { code?: string; message?: string; details?: unknown } } | undefined;
  expect(body?.error?.code, context).toBe("UNAVAILABLE");
  expect(body?.error?.message, context).toContain(`maxConnections ${limit}`);
  expect(body?.error?.details, context).toEqual({ limit: "maxConnections", value: limit });
  expect(answer.headers["retry-after"], context).toBe("1");
  expect(answer.headers.connection, context).toBe("close");
  expect(answer.closedByServer, `${context}: the server did not close the connection`).toBe(true);
}

/**
 * With `limit` connections open and served, every generated request on a further connection (any
 * route, valid or refused credentials, any body) is answered 503 `UNAVAILABLE` with the documented
 * body and headers, and the server closes that connection; the held connections keep being served
 * throughout. A further connection that sends nothing is closed by the server after about 10 s.
 * Once the held connections close, a new connection is served again.
 */
export async function runConnectionLimit(h: Harness, limit: number, numRuns: number, seed: number | undefined): Promise<void> {
  const port = h.server.port;
  const held = await fillSlots(port, limit);
  h.tally.extra(CONNECTION_CHECK, limit);
  const idle = await HeldConnection.open(port, "127.0.5.254");
  const idleOpened = performance.now();
  let idleClosedAfter: number | null = null;
  const idleWatch = (async () => {
    while (!idle.closed && performance.now() - idleOpened < 30_000) await sleep(50);
    if (idle.closed) idleClosedAfter = (performance.now() - idleOpened) / 1000;
  })();
  let lastPing = performance.now();
  const keepServed = async (): Promise<void> => {
    if (performance.now() - lastPing < 1_500) return;
    lastPing = performance.now();
    const statuses = await Promise.all(held.map((c) => c.ping()));
    h.tally.record(CONNECTION_CHECK, `a held connection within the limit: ${[...new Set(statuses)].join(", ")}`, statuses.length, 0);
    expect(statuses, "a connection within the limit was not served").toEqual(held.map(() => 200));
  };
  const addresses = new SourceAddresses("127.0.5", 200);
  const credential = fc.oneof(validCredential(h.secrets.admin, "admin"), refusedCredential(h.secrets));
  const request = fc.oneof(
    fc.tuple(fc.constantFrom(...OPERATIONS), credential, fc.constantFrom("billing", "orders", "nv-x", "%ff")).map(([op, c, ns]) => ({
      what: `POST ${op} on ${ns} (${c.what})`,
      bytes: encode({ method: "POST", target: `/v1/namespaces/${ns}/${op}`, headers: credentialHeaders(c, "application/json"), body: '{"count":1}' }),
    })),
    fc.tuple(fc.constantFrom("/v1/health", "/metrics", "/nowhere"), credential).map(([target, c]) => ({ what: `GET ${target} (${c.what})`, bytes: encode({ method: "GET", target, headers: credentialHeaders(c) }) })),
  );

  try {
    await fc.assert(
      fc.asyncProperty(request, async ({ what, bytes }) => {
        const answer = await exchange(port, bytes, { localAddress: addresses.take(), closeWaitMs: 2_000 });
        h.tally.record(CONNECTION_CHECK, `over the limit: ${outcomeOf(answer.status, answer.body)}${answer.closedByServer ? ", then closed" : ", left open"}`, 1, 1);
        try {
          expectOverLimit(answer, limit, what);
          await keepServed();
        } catch (err) {
          h.tally.violation(CONNECTION_CHECK);
          throw err;
        }
      }),
      { numRuns, ...seedParameter(seed), endOnFailure: true },
    );
    try {
      while (!idle.closed && performance.now() - idleOpened < 30_000) {
        await keepServed();
        await sleep(100);
      }
      await idleWatch;
      h.tally.record(CONNECTION_CHECK, "an idle connection over the limit: closed by the server", 0, 1);
      expect(idleClosedAfter, "an idle connection over the limit was not closed within 30 s").not.toBeNull();
      // The server arms a 10 s inactivity timer when it accepts the socket, after our connect.
      expect(idleClosedAfter ?? 0, "an idle connection over the limit was closed before its 10 s").toBeGreaterThanOrEqual(9.5);
      await keepServed();
    } catch (err) {
      h.tally.violation(CONNECTION_CHECK);
      throw err;
    }
  } finally {
    for (const c of held) c.close();
    idle.close();
  }

  // Once the held connections are gone, new ones are served again.
  const deadline = performance.now() + 5_000;
  let status: number | null = null;
  while (performance.now() < deadline) {
    const answer = await exchange(port, encode({ method: "GET", target: "/v1/health", headers: [] }), { localAddress: addresses.take() });
    status = answer.status;
    if (status === 200) break;
    await sleep(50);
  }
  h.tally.record(CONNECTION_CHECK, `a new connection once the held ones closed: ${String(status)}`, 1, 0);
  try {
    expect(status, "a new connection was refused after the held ones closed").toBe(200);
  } catch (err) {
    h.tally.violation(CONNECTION_CHECK);
    throw err;
  }
  h.tally.observations.push(
    `Connection limit ${limit}: with ${limit} connections held open (and served every 1.5 s throughout), ${numRuns} generated requests on further connections were answered 503 \`UNAVAILABLE\` (\`retry-after: 1\`, \`connection: close\`) and closed by the server; a further connection that sent nothing was closed after ${(idleClosedAfter ?? Number.NaN).toFixed(1)} s (documented: 10 s).`,
  );
}
