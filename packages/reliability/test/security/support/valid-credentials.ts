import { responseValidators } from "@leasehold/protocol";
import fc from "fast-check";
import { expect } from "vitest";
import { validCredential, type Credential } from "./credentials.js";
import { encode, jsonOf, type Answer } from "./exchange.js";
import type { Harness } from "./harness.js";
import { credentialHeaders, OPERATIONS, type Operation } from "./probes.js";
import { outcomeOf } from "./security-tally.js";
import { seedParameter } from "../../../src/seed-parameter.js";

/** Check name in the report. */
export const VALID_CHECK = "valid tokens";

/** Where a valid token is used: a namespace spelling (or `/metrics`) and the token valid there. */
interface Target {
  readonly what: string;
  readonly namespace: string | null;
  readonly credential: Credential;
}

/** What a generated valid request does, and the answer it must get. */
type Action =
  | { readonly kind: "operation"; readonly op: Operation; readonly n: number }
  | { readonly kind: "wrong-method"; readonly op: Operation; readonly method: string }
  | { readonly kind: "invalid-namespace"; readonly op: Operation }
  | { readonly kind: "metrics" };

function targets(h: Harness): fc.Arbitrary<Target> {
  const { admin, billing, orders } = h.secrets;
  const spelling = fc.constantFrom("billing", "%62illing", "billin%67");
  return fc.oneof(
    fc.tuple(spelling, validCredential(billing, "billing")).map(([namespace, credential]) => ({ what: `billing's token on ${namespace}`, namespace, credential })),
    fc.tuple(spelling, validCredential(admin, "admin")).map(([namespace, credential]) => ({ what: `the * token on ${namespace}`, namespace, credential })),
    validCredential(orders, "orders").map((credential) => ({ what: "orders' token on orders", namespace: "orders", credential })),
    fc.tuple(fc.stringMatching(/^[a-z0-9]{1,12}$/), validCredential(admin, "admin")).map(([s, credential]) => ({ what: "the * token on a new namespace", namespace: `vt-${s}`, credential })),
  );
}

/** An operation with a valid body, or one sent with a wrong method. */
const action: fc.Arbitrary<Action> = fc.oneof(
  { arbitrary: fc.tuple(fc.constantFrom(...OPERATIONS), fc.integer({ min: 1, max: 5 })).map(([op, n]): Action => ({ kind: "operation", op, n })), weight: 8 },
  { arbitrary: fc.tuple(fc.constantFrom(...OPERATIONS), fc.constantFrom("GET", "PUT", "DELETE")).map(([op, method]): Action => ({ kind: "wrong-method", op, method })), weight: 1 },
);

/** A body of `op` that is valid and acquires nothing anybody else holds (fresh descriptors, unknown tokens). */
function validBody(op: Operation, n: number, unique: string): unknown {
  switch (op) {
    case "lock":
      return { locks: Array.from({ length: n }, (_, i) => ({ descriptor: `v-${unique}-${i}`, mode: i % 2 === 0 ? "exclusive" : "shared" })) };
    case "unlock":
    case "refresh":
      return { tokens: [`not-a-token-${unique}`] };
    case "timestamps":
    case "transactions/start":
      return { count: n };
    case "immutable-timestamp":
      return {};
    case "lock-batch":
      return { requests: Array.from({ length: n }, (_, i) => ({ locks: [{ descriptor: `vb-${unique}-${i}`, mode: "exclusive" }] })) };
    case "lock-cancel":
      return { requestId: `nothing-${unique}` };
  }
}

/** Check the 200 answer of a valid operation against the protocol's answer schemas and its request. */
function expectServed(op: Operation, n: number, answer: Answer, context: string): void {
  expect(answer.status, `${context}: ${answer.body.toString("utf8").slice(0, 300)}`).toBe(200);
  const text = answer.body.toString("utf8");
  if (op === "lock-batch") {
    const lines = text.split("\n").filter((l) => l !== "");
    expect(lines.length, context).toBe(n);
    for (const line of lines) {
      const parsed = JSON.parse(line) as unknown;
      expect(responseValidators["lock-batch"].check(parsed), context).toBe(true);
      expect((parsed as { result?: { status?: string } }).result?.status, context).toBe("acquired");
    }
    return;
  }
  const json = jsonOf(answer);
  expect(responseValidators[op].check(json), `${context}: ${text.slice(0, 300)}`).toBe(true);
  if (op === "lock") expect((json as { status: string }).status, context).toBe("acquired");
  if (op === "unlock") expect(json, context).toEqual({ unlocked: [] });
  if (op === "refresh") expect((json as { refreshed: unknown[] }).refreshed, context).toEqual([]);
  if (op === "timestamps") expect((json as { count: number }).count, context).toBe(n);
  if (op === "transactions/start") expect((json as { transactions: unknown[] }).transactions.length, context).toBe(n);
  if (op === "lock-cancel") expect(json, context).toEqual({ cancelled: false });
}

/**
 * Generated requests with valid tokens (the namespace's own or `"*"`, the scheme in any case, extra
 * spaces): every operation is served and its answer matches the protocol's schema; a wrong method
 * gets 405 and an invalid namespace 400 (authentication passed, the ordinary checks came next);
 * `GET /metrics` with the `"*"` token is served. Whatever was acquired is unlocked with the same
 * credential, and every lock token received is kept for the log scan.
 */
export async function runValidCredentials(h: Harness, numRuns: number, seed: number | undefined): Promise<void> {
  let unique = 0;
  const admin = validCredential(h.secrets.admin, "admin");
  const generated = fc.oneof(
    { arbitrary: fc.tuple(targets(h), action), weight: 8 },
    // Only the * token passes authentication on an invalid namespace (it names no table entry).
    { arbitrary: fc.tuple(admin, fc.constantFrom(...OPERATIONS)).map(([credential, op]): [Target, Action] => [{ what: "the * token on an invalid namespace", namespace: "bad%20namespace", credential }, { kind: "invalid-namespace", op }]), weight: 1 },
    { arbitrary: admin.map((credential): [Target, Action] => [{ what: "the * token on /metrics", namespace: null, credential }, { kind: "metrics" }]), weight: 1 },
  );
  await fc.assert(
    fc.asyncProperty(generated, async ([target, act]) => {
      const u = `${process.pid}-${unique++}`;
      let request: Buffer;
      if (act.kind === "metrics") request = encode({ method: "GET", target: "/metrics", headers: credentialHeaders(target.credential) });
      else {
        const method = act.kind === "wrong-method" ? act.method : "POST";
        request = encode({ method, target: `/v1/namespaces/${target.namespace ?? ""}/${act.op}`, headers: credentialHeaders(target.credential, "application/json"), body: JSON.stringify(validBody(act.op, act.kind === "operation" ? act.n : 1, u)) });
      }
      const answer = await h.send(VALID_CHECK, request);
      const label = act.kind === "metrics" ? "GET /metrics" : act.kind === "operation" ? act.op : act.kind;
      h.tally.record(VALID_CHECK, `${label}: ${outcomeOf(answer.status, answer.body)}`, 1, 0);
      const context = `${target.what} (${target.credential.what}), ${label}`;
      try {
        if (act.kind === "metrics") {
          expect(answer.status, context).toBe(200);
          expect(answer.body.toString("utf8"), context).toContain("leasehold_info{");
        } else if (act.kind === "wrong-method") {
          expect(answer.status, context).toBe(405);
          expect((jsonOf(answer) as { error: { code: string } }).error.code).toBe("METHOD_NOT_ALLOWED");
          expect(answer.headers.allow, context).toBe("POST");
        } else if (act.kind === "invalid-namespace") {
          expect(answer.status, context).toBe(400);
          expect((jsonOf(answer) as { error: { code: string } }).error.code).toBe("INVALID_ARGUMENT");
        } else {
          expectServed(act.op, act.n, answer, context);
          const tokens = new Set<string>();
          const text = answer.body.toString("utf8");
          for (const line of text.split("\n").filter((l) => l !== "")) {
            const parsed = JSON.parse(line) as { token?: string; result?: { token?: string }; transactions?: { token: string }[] };
            if (parsed.token !== undefined) tokens.add(parsed.token);
            if (parsed.result?.token !== undefined) tokens.add(parsed.result.token);
            for (const t of parsed.transactions ?? []) tokens.add(t.token);
          }
          if (tokens.size > 0 && target.namespace !== null) {
            const unlock = await h.send(
              VALID_CHECK,
              encode({ method: "POST", target: `/v1/namespaces/${target.namespace}/unlock`, headers: credentialHeaders(target.credential, "application/json"), body: JSON.stringify({ tokens: [...tokens] }) }),
            );
            h.tally.extra(VALID_CHECK, 1);
            expect(new Set((jsonOf(unlock) as { unlocked: string[] }).unlocked), `${context}: unlock with the same credential`).toEqual(tokens);
          }
        }
      } catch (err) {
        h.tally.violation(VALID_CHECK);
        throw err;
      }
    }),
    { numRuns, ...seedParameter(seed), endOnFailure: true },
  );
}
