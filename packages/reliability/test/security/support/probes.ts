import fc from "fast-check";
import type { Credential } from "./credentials.js";
import { encode, type WireRequest } from "./exchange.js";

/** Every operation route of protocol v1 and its additions. */
export const OPERATIONS = ["lock", "unlock", "refresh", "timestamps", "transactions/start", "immutable-timestamp", "lock-batch", "lock-cancel"] as const;
/** One of {@link OPERATIONS}. */
export type Operation = (typeof OPERATIONS)[number];

/** What the refused requests aim at in the namespace that holds locks: served, each would change it. */
export interface Targets {
  /** The descriptor held in `billing`. */
  readonly heldDescriptor: string;
  /** The token that holds it. */
  readonly heldToken: string;
  /** The `requestId` of the lock request waiting in `billing`. */
  readonly waiterRequestId: string;
}

/** A request body and its content type; `null` content type: no header. */
interface Body {
  readonly what: string;
  readonly text: string;
  readonly contentType: string | null;
}

/** Bodies that would change `billing` if an unauthenticated request were ever served. */
function harmfulBody(op: Operation, targets: Targets): fc.Arbitrary<Body> {
  const json = (value: unknown): Body => ({ what: "valid body", text: JSON.stringify(value), contentType: "application/json" });
  const valid: Record<Operation, fc.Arbitrary<Body>> = {
    lock: fc.integer({ min: 0, max: 60_000 }).map((ms) => json({ locks: [{ descriptor: targets.heldDescriptor, mode: "exclusive" }], acquireTimeoutMs: ms })),
    unlock: fc.constant(json({ tokens: [targets.heldToken] })),
    refresh: fc.constant(json({ tokens: [targets.heldToken] })),
    timestamps: fc.integer({ min: 1, max: 10_000 }).map((count) => json({ count })),
    "transactions/start": fc.integer({ min: 1, max: 1_000 }).map((count) => json({ count })),
    "immutable-timestamp": fc.constant(json({})),
    "lock-batch": fc.constant(json({ requests: [{ locks: [{ descriptor: targets.heldDescriptor, mode: "shared" }], acquireTimeoutMs: 60_000 }] })),
    "lock-cancel": fc.constant(json({ requestId: targets.waiterRequestId })),
  };
  const other = fc.constantFrom<Body>(
    { what: "broken JSON", text: "{not json", contentType: "application/json" },
    { what: "an empty body", text: "", contentType: "application/json" },
    { what: "an XML body", text: "<x/>", contentType: "text/xml" },
    { what: "no content type", text: '{"count":1}', contentType: null },
    { what: "an unknown field", text: '{"tokens":[],"bogus":1}', contentType: "application/json; charset=utf-8" },
  );
  return fc.oneof({ arbitrary: valid[op], weight: 4 }, { arbitrary: other, weight: 1 });
}

/** One unauthenticated request on an operation route, sent to several namespaces that must all answer alike. */
export interface RefusedOperationProbe {
  readonly route: "operation";
  readonly op: Operation;
  readonly method: string;
  readonly body: Body;
  readonly credential: Credential;
  /** The percent-encoded namespace standing for `billing` (`billing`, `%62illing`, …). */
  readonly billingAs: string;
  /** A namespace nobody ever used. */
  readonly neverUsed: string;
  /** A namespace that is not valid at all (400 once authenticated). */
  readonly invalid: string;
}

/** One unauthenticated `GET /metrics`. */
export interface RefusedMetricsProbe {
  readonly route: "metrics";
  readonly target: string;
  readonly credential: Credential;
}

/** A probe of a route that needs no token (health, an unknown path), with any credential at all. */
export interface OpenProbe {
  readonly route: "health" | "unknown";
  readonly target: string;
  readonly credential: Credential;
}

/** Any generated probe of the refused-credentials test. */
export type Probe = RefusedOperationProbe | RefusedMetricsProbe | OpenProbe;

const INVALID_NAMESPACES = ["", "bad%20ns", "%ff", "-lead", "a".repeat(65), "%2e%2e", "bill ing".replace(" ", "%20"), "billing%00", "%F0%9F%98%80"];
const BILLING_SPELLINGS = ["billing", "%62illing", "billin%67", "%62%69%6c%6c%69%6e%67"];

/**
 * Probes for the refused-credentials test: mostly operations (every route, every method, bodies
 * that would change `billing` if served), some `GET /metrics`, and some open routes.
 */
export function probes(refused: fc.Arbitrary<Credential>, refusedOnMetrics: fc.Arbitrary<Credential>, anyCredential: fc.Arbitrary<Credential>, targets: Targets): fc.Arbitrary<Probe> {
  const operation = fc
    .tuple(
      fc.constantFrom(...OPERATIONS),
      fc.oneof({ arbitrary: fc.constant("POST"), weight: 5 }, { arbitrary: fc.constantFrom("GET", "PUT", "DELETE", "PATCH", "OPTIONS"), weight: 1 }),
      refused,
      fc.constantFrom(...BILLING_SPELLINGS),
      fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,24}$/).map((s) => `nv-${s}`),
      fc.constantFrom(...INVALID_NAMESPACES),
    )
    .chain(([op, method, credential, billingAs, neverUsed, invalid]) =>
      harmfulBody(op, targets).map((body): Probe => ({ route: "operation", op, method, body, credential, billingAs, neverUsed, invalid })),
    );
  const metrics = fc.tuple(fc.constantFrom("/metrics", "/metrics?name[]=leasehold_held_locks"), refusedOnMetrics).map(([target, credential]): Probe => ({ route: "metrics", target, credential }));
  const open = fc
    .tuple(fc.constantFrom<OpenProbe["route"]>("health", "unknown"), fc.constantFrom("/admin", "/v1/namespaces/billing", "/v1/namespaces/billing/nope", "/v2/health"), anyCredential)
    .map(([route, unknown, credential]): Probe => ({ route, target: route === "health" ? "/v1/health" : unknown, credential }));
  return fc.oneof({ arbitrary: operation, weight: 8 }, { arbitrary: metrics, weight: 1 }, { arbitrary: open, weight: 1 });
}

/** The headers of a request carrying `credential`. */
export function credentialHeaders(credential: Credential, contentType: string | null = null): [string, string][] {
  const headers: [string, string][] = [];
  if (contentType !== null) headers.push(["content-type", contentType]);
  if (credential.header !== null) headers.push(["authorization", credential.header]);
  return headers;
}

/** The bytes of an operation probe sent to namespace `rawNamespace`. */
export function operationRequest(probe: RefusedOperationProbe, rawNamespace: string): Buffer {
  const request: WireRequest = {
    method: probe.method,
    target: `/v1/namespaces/${rawNamespace}/${probe.op}`,
    headers: credentialHeaders(probe.credential, probe.body.contentType),
    body: probe.body.text,
  };
  return encode(request);
}

/** The bytes of a `GET` probe (metrics, health, unknown path). */
export function getRequest(probe: RefusedMetricsProbe | OpenProbe): Buffer {
  return encode({ method: "GET", target: probe.target, headers: credentialHeaders(probe.credential) });
}
