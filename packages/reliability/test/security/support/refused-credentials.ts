import { responseValidators } from "@leasehold/protocol";
import fc from "fast-check";
import { expect } from "vitest";
import { refusedCredential, validCredential, type Credential } from "./credentials.js";
import { exchange, jsonOf, withoutDate, type Answer } from "./exchange.js";
import type { Harness } from "./harness.js";
import { lockState } from "./metrics-text.js";
import { getRequest, operationRequest, probes, type Probe, type Targets } from "./probes.js";
import { outcomeOf } from "./security-tally.js";
import { SourceAddresses } from "./source-addresses.js";
import { seedParameter } from "../../../src/seed-parameter.js";

/** The `www-authenticate` header docs/operations.md documents for every 401. */
export const WWW_AUTHENTICATE = 'Bearer realm="leasehold"';

/** Check names of this test in the report, by credential kind. */
export const REFUSED_CHECK = (kind: Credential["kind"]): string => `refused credentials: ${kind}`;
/** Check name of the probes of routes that need no token. */
export const OPEN_CHECK = "routes that need no token";
/** Check name of the lock-state comparison around each batch. */
export const STATE_CHECK = "refused credentials: lock state unchanged";

/** Probes per seeding of the waiter: well inside its 60 s wait. */
const PER_BATCH = 150;

/** Options of {@link runRefusedCredentials}. */
export interface RefusedOptions {
  readonly harness: Harness;
  /** The namespace with locks: its held descriptor and token (the waiter is seeded here per batch). */
  readonly held: Pick<Targets, "heldDescriptor" | "heldToken">;
  readonly numRuns: number;
  readonly seed: number | undefined;
  /** Every bearer-like secret presented (near misses of real tokens), for the log scan. */
  readonly presented: Set<string>;
}

/**
 * The reference 401: a `lock` on `billing` without credentials. Checked once against the protocol
 * (error body, code, `www-authenticate`) and for not naming the namespace or any secret; every
 * refused answer must then carry exactly this body.
 */
export async function reference401(h: Harness): Promise<Answer> {
  const probe: Probe = {
    route: "operation",
    op: "lock",
    method: "POST",
    body: { what: "valid body", text: '{"locks":[{"descriptor":"x","mode":"exclusive"}]}', contentType: "application/json" },
    credential: { kind: "missing", what: "no authorization header", header: null },
    billingAs: "billing",
    neverUsed: "nv-reference",
    invalid: "%ff",
  };
  h.tally.extra(STATE_CHECK, 1);
  const answer = await h.send(STATE_CHECK, operationRequest(probe, "billing"));
  expect(answer.status).toBe(401);
  expect(answer.headers["www-authenticate"]).toBe(WWW_AUTHENTICATE);
  expect(answer.headers["content-type"]).toMatch(/^application\/json/);
  const body = jsonOf(answer);
  expect(responseValidators.error.check(body)).toBe(true);
  expect((body as { error: { code: string } }).error.code).toBe("UNAUTHENTICATED");
  const text = answer.body.toString("utf8");
  for (const secret of ["billing", "orders", h.secrets.admin, h.secrets.billing, h.secrets.orders]) expect(text).not.toContain(secret);
  return answer;
}

function expectRefused(answer: Answer, reference: Answer, context: string): void {
  expect(answer.timedOut, context).toBe(false);
  expect(answer.status, context).toBe(401);
  expect(answer.body.equals(reference.body), `${context}: body ${answer.body.toString("utf8").slice(0, 300)}`).toBe(true);
  expect(answer.headers["www-authenticate"], context).toBe(WWW_AUTHENTICATE);
  expect(answer.headers["content-type"], context).toMatch(/^application\/json/);
}

/** The part after `Bearer ` of a presented credential, when it is long enough to be worth looking for in the logs. */
function presentedToken(credential: Credential): string | null {
  const token = /^\S+ +(\S{16,})/.exec(credential.header ?? "")?.[1];
  return token ?? null;
}

/**
 * Generated requests with missing, malformed, wrong and other-namespace bearer tokens on every
 * operation route (every method, bodies that would change `billing` if served), on `GET /metrics`,
 * and on the routes that need no token. Each operation probe goes to `billing` (which holds a lock
 * and has a waiter, under one of its percent-encoded spellings), to a never-used namespace and to
 * an invalid one: all three answers must be 401 with the reference body and byte-identical apart
 * from the `date` header. Before and after each batch, the lock table's metrics must be equal.
 */
export async function runRefusedCredentials(options: RefusedOptions): Promise<void> {
  const { harness: h, held, numRuns, presented } = options;
  const reference = await reference401(h);
  const addresses = new SourceAddresses("127.0.2", 200);
  const port = h.server.port;
  const send = (request: Buffer): Promise<Answer> => exchange(port, request, { localAddress: addresses.take() });
  const refused = refusedCredential(h.secrets);
  const refusedOnMetrics = refusedCredential(h.secrets, true);
  const anyCredential = fc.oneof(refused, validCredential(h.secrets.admin, "admin"));

  let remaining = numRuns;
  for (let batch = 0; remaining > 0; batch++) {
    const runs = Math.min(PER_BATCH, remaining);
    remaining -= runs;
    const waiterRequestId = `waiter-${batch}`;
    const waiter = h.post(STATE_CHECK, "billing", "lock", { requestId: waiterRequestId, locks: [{ descriptor: held.heldDescriptor, mode: "exclusive" }], acquireTimeoutMs: 60_000 }, h.secrets.billing, { timeoutMs: 70_000 });
    await h.waitForSample(STATE_CHECK, "leasehold_waiting_requests", 1);
    const before = lockState(await h.scrape(STATE_CHECK));
    const targets: Targets = { ...held, waiterRequestId };

    await fc.assert(
      fc.asyncProperty(probes(refused, refusedOnMetrics, anyCredential, targets), async (probe) => {
        const token = presentedToken(probe.credential);
        if (token !== null && probe.credential.kind !== "valid") presented.add(token);
        if (probe.route === "operation") {
          const check = REFUSED_CHECK(probe.credential.kind);
          const context = `${probe.credential.what}, ${probe.method} ${probe.op} with ${probe.body.what}`;
          const answers = [await send(operationRequest(probe, probe.billingAs)), await send(operationRequest(probe, probe.neverUsed)), await send(operationRequest(probe, probe.invalid))];
          h.tally.record(check, outcomeOf(answers[0]?.status ?? null, answers[0]?.body ?? Buffer.alloc(0)), 3, 3);
          try {
            answers.forEach((answer, i) => expectRefused(answer, reference, `${context} on ${[probe.billingAs, probe.neverUsed, probe.invalid][i] ?? "?"}`));
            const [onBilling, onNeverUsed, onInvalid] = answers.map(withoutDate);
            expect(onNeverUsed, `${context}: the answers for billing and a never-used namespace differ`).toBe(onBilling);
            expect(onInvalid, `${context}: the answers for billing and an invalid namespace differ`).toBe(onBilling);
          } catch (err) {
            h.tally.violation(check);
            throw err;
          }
          return;
        }
        if (probe.route === "metrics") {
          const check = REFUSED_CHECK(probe.credential.kind);
          const answer = await send(getRequest(probe));
          h.tally.record(check, `GET /metrics: ${outcomeOf(answer.status, answer.body)}`, 1, 1);
          try {
            expectRefused(answer, reference, `${probe.credential.what} on GET ${probe.target}`);
          } catch (err) {
            h.tally.violation(check);
            throw err;
          }
          return;
        }
        const answer = await send(getRequest(probe));
        h.tally.record(OPEN_CHECK, `GET ${probe.route === "health" ? "/v1/health" : "unknown path"}: ${outcomeOf(answer.status, answer.body)}`, 1, probe.credential.kind === "valid" ? 0 : 1);
        try {
          if (probe.route === "health") {
            expect(answer.status, probe.credential.what).toBe(200);
            expect(responseValidators.health.check(jsonOf(answer))).toBe(true);
          } else {
            expect(answer.status, `${probe.credential.what} on ${probe.target}`).toBe(404);
            expect((jsonOf(answer) as { error?: { code?: string } } | undefined)?.error?.code).toBe("NOT_FOUND");
          }
        } catch (err) {
          h.tally.violation(OPEN_CHECK);
          throw err;
        }
      }),
      // No shrinking: probes do not change state, but the first failing one is the clearest report.
      { numRuns: runs, ...seedParameter(options.seed === undefined ? undefined : options.seed + batch), endOnFailure: true },
    );

    const after = lockState(await h.scrape(STATE_CHECK));
    h.tally.record(STATE_CHECK, "lock-table metrics equal before and after a batch", 2, 0);
    try {
      expect(after, "the lock table changed during a batch of refused requests").toEqual(before);
    } catch (err) {
      h.tally.violation(STATE_CHECK);
      throw err;
    }
    const cancel = await h.post(STATE_CHECK, "billing", "lock-cancel", { requestId: waiterRequestId }, h.secrets.billing);
    expect(jsonOf(cancel)).toEqual({ cancelled: true });
    const gone = await waiter;
    expect(gone.status).toBe(499);
  }
}
