import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Validator as OpenApiValidator } from "@seriousme/openapi-schema-validator";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import * as activitySchemas from "../src/activity-schemas.js";
import * as inspectionSchemas from "../src/inspection-schemas.js";
import * as schemas from "../src/schemas.js";
import * as waitAndLeaseSchemas from "../src/wait-and-lease-schemas.js";
import { openApiDocument, PROTOCOL_BODIES, protocolJsonSchemas } from "../src/index.js";

const root = join(import.meta.dirname, "..");
const fixturesDir = join(import.meta.dirname, "fixtures");
const schemasDir = join(root, "schemas");
const read = (path: string): unknown => JSON.parse(readFileSync(path, "utf8"));
const text = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;
const REGENERATE = "stale: run `pnpm --filter @leasehold/protocol generate` and commit schemas/ and openapi.json";

/** An independent validator (ajv, JSON Schema 2020-12) over the shipped files, not over TypeBox. */
function shippedValidators() {
  const ajv = new Ajv2020({ strict: true, strictRequired: false, allErrors: true });
  const files = readdirSync(schemasDir);
  for (const file of files) ajv.addSchema(read(join(schemasDir, file)) as object, file);
  return (file: string, body: unknown): boolean => {
    const validate = ajv.getSchema(file);
    if (validate === undefined) throw new Error(`no schema file ${file}`);
    return validate(body) as boolean;
  };
}

/** `lock.request.minimal.json` → `lock.request.schema.json`; `health-cluster` answers are health answers. */
function schemaFileOf(fixture: string): string {
  const [name, kind] = fixture.split(".") as [string, string];
  return `${name === "health-cluster" ? "health" : name}.${kind}.schema.json`;
}

describe("generated JSON Schemas and OpenAPI document", () => {
  it("are up to date with the TypeBox schemas (fails when a schema changed without regenerating)", () => {
    const generated = protocolJsonSchemas();
    expect(readdirSync(schemasDir).sort(), REGENERATE).toEqual(Object.keys(generated).sort());
    for (const [file, schema] of Object.entries(generated)) {
      expect(readFileSync(join(schemasDir, file), "utf8"), `${file} ${REGENERATE}`).toBe(text(schema));
    }
    const { version } = read(join(root, "package.json")) as { version: string };
    expect(readFileSync(join(root, "openapi.json"), "utf8"), `openapi.json ${REGENERATE}`).toBe(text(openApiDocument({ version })));
  });

  it("cover every request and answer schema of schemas.ts, inspection-schemas.ts and activity-schemas.ts", () => {
    const inCatalog = new Set<unknown>();
    for (const body of PROTOCOL_BODIES) {
      inCatalog.add(body.schema);
      for (const member of (body.schema as { anyOf?: unknown[] }).anyOf ?? []) inCatalog.add(member);
    }
    const bodies = Object.entries({ ...schemas, ...inspectionSchemas, ...activitySchemas, ...waitAndLeaseSchemas }).filter(([name]) => /(Request|Response|Line)Schema$/.test(name));
    expect(bodies.length).toBeGreaterThan(20);
    // The additions to v1 (inspection, revoke, the activity feed) are bodies too.
    const names = bodies.map(([name]) => name);
    for (const name of ["NamespacesResponseSchema", "NamespaceLocksResponseSchema", "RevokeRequestSchema", "RevokeResponseSchema", "EventsResponseSchema"]) expect(names).toContain(name);
    expect(PROTOCOL_BODIES.map((b) => b.name)).toEqual(expect.arrayContaining(["namespaces.response", "locks.response", "revoke.request", "revoke.response", "events.response"]));
    // A union of covered bodies (LockBatchLineSchema: result or error line) is covered too.
    const covered = (schema: unknown): boolean =>
      inCatalog.has(schema) || ((schema as { anyOf?: unknown[] }).anyOf?.every(covered) ?? false);
    for (const [name, schema] of bodies) expect(covered(schema), `${name} is missing from PROTOCOL_BODIES`).toBe(true);
  });

  it("every golden fixture validates against its shipped schema file", () => {
    const check = shippedValidators();
    const fixtures = readdirSync(fixturesDir).filter((f) => f.endsWith(".json"));
    expect(fixtures.length).toBeGreaterThan(20);
    for (const fixture of fixtures) expect(check(schemaFileOf(fixture), read(join(fixturesDir, fixture))), fixture).toBe(true);
  });

  it("the shipped schemas refuse what the protocol refuses (the checks can fail)", () => {
    const check = shippedValidators();
    const lock = (extra: object, spec: object = { descriptor: "d", mode: "exclusive" }): unknown => ({ locks: [spec], ...extra });
    expect(check("lock.request.schema.json", lock({}))).toBe(true);
    expect(check("lock.request.schema.json", lock({}, { descriptor: "d", mode: "permit", limit: 3 }))).toBe(true);
    expect(check("lock.request.schema.json", lock({}, { descriptor: "d", mode: "permit" })), "permit needs limit").toBe(false);
    expect(check("lock.request.schema.json", lock({}, { descriptor: "d", mode: "shared", limit: 3 })), "limit only with permit").toBe(false);
    expect(check("lock.request.schema.json", lock({ behavior: "as-many-as-possible", max: 2 }))).toBe(true);
    expect(check("lock.request.schema.json", lock({ max: 2 })), "max only with as-many-as-possible").toBe(false);
    expect(check("lock.request.schema.json", lock({ acquireTimeoutMs: null })), "null is not absent").toBe(false);
    expect(check("lock.request.schema.json", lock({ acquireTimeoutMs: 60_001 }))).toBe(false);
    expect(check("lock.request.schema.json", lock({ tiemout: 1 })), "unknown field").toBe(false);
    expect(check("lock.request.schema.json", { locks: [] })).toBe(false);
    expect(check("timestamps.request.schema.json", { count: 1.5 })).toBe(false);
    expect(check("wait-for-locks.request.schema.json", { locks: [{ descriptor: "d", mode: "exclusive" }] })).toBe(true);
    expect(check("wait-for-locks.request.schema.json", { locks: [{ descriptor: "d", mode: "permit", limit: 2 }] }), "a wait has no permit mode").toBe(false);
    expect(check("timestamp-leases.request.schema.json", { name: "n", count: 0 })).toBe(true);
    expect(check("timestamp-leases.request.schema.json", { name: "", count: 0 }), "a name has at least one character").toBe(false);
    expect(check("timestamp-leases.request.schema.json", { name: "n" }), "count is required").toBe(false);
    expect(check("lock-batch.response.schema.json", { index: 0 })).toBe(false);
    expect(check("lock-batch.response.schema.json", { index: 0, token: "t", fencingTokens: [] })).toBe(false);
    expect(check("error.response.schema.json", { error: { code: "X", message: "m" } }), "details is required").toBe(false);
    expect(check("revoke.request.schema.json", { fingerprints: ["3F9A0C1D5E7B2A48"] }), "fingerprints are lower-case hex").toBe(false);
    expect(check("revoke.request.schema.json", { fingerprints: [] }), "at least one fingerprint").toBe(false);
    expect(check("locks.response.schema.json", { namespace: "n", view: "other", summary: {}, descriptors: [] }), "unknown view").toBe(false);
    expect(check("events.response.schema.json", { events: [], nextSeq: 0 }), "canRevoke is required").toBe(false);
    const member = { serverId: "a", url: "http://a", self: true, ready: true, heartbeatAgeMs: null, answering: true, lastAnswerAgeMs: 0, shardsLed: 1 };
    const members = (m: object): unknown => ({ serverId: "a", shards: 1, leaders: [{ shard: 0, leaderServerId: "a", leaderUrl: "http://a", epoch: 1, standby: null }], members: [m] });
    expect(check("cluster-members.response.schema.json", members(member))).toBe(true);
    expect(check("cluster-members.response.schema.json", members({ ...member, answering: undefined })), "answering is required").toBe(false);
    expect(check("cluster-members.response.schema.json", members({ ...member, lastAnswerAgeMs: -1 })), "ages are not negative").toBe(false);
    expect(check("events.response.schema.json", { events: [{ seq: 1, at: 0, kind: "lapse", namespace: "n", descriptors: 1, heldForMs: 0, token: "t" }], nextSeq: 1, canRevoke: false }), "an event never carries a token").toBe(false);
  });

  it("openapi.json is a valid OpenAPI 3.1 document with every route of docs/protocol.md", async () => {
    const doc = read(join(root, "openapi.json")) as {
      openapi: string;
      paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>>;
    };
    const result = await new OpenApiValidator().validate(doc as unknown as Parameters<OpenApiValidator["validate"]>[0]);
    expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(doc.openapi).toBe("3.1.0");
    const operations = ["lock", "unlock", "refresh", "timestamps", "transactions/start", "immutable-timestamp", "lock-batch", "lock-cancel", "wait-for-locks", "timestamp-leases", "timestamp-leases/min", "lock-watches", "lock-events"];
    const additions = ["/v1/namespaces", "/v1/namespaces/{namespace}/locks", "/v1/namespaces/{namespace}/revoke", "/v1/events", "/v1/cluster/members", "/ui", "/ui/{file}"];
    expect(Object.keys(doc.paths).sort()).toEqual([...operations.map((op) => `/v1/namespaces/{namespace}/${op}`), "/metrics", "/v1/cluster", "/v1/health", ...additions].sort());
    for (const op of operations) {
      const { responses } = doc.paths[`/v1/namespaces/{namespace}/${op}`]?.post ?? { responses: {} };
      for (const status of ["200", "400", "401", "405", "413", "415", "421", "429", "500", "503"]) expect(responses, `${op} ${status}`).toHaveProperty(status);
      expect(responses["400"]?.content).toEqual({ "application/json": { schema: { $ref: "#/components/schemas/ErrorBody" } } });
    }
    expect(doc.paths["/v1/namespaces/{namespace}/lock"]?.post?.responses).toHaveProperty("409");
    expect(doc.paths["/v1/namespaces/{namespace}/lock"]?.post?.responses).toHaveProperty("499");
    expect(doc.paths["/v1/namespaces/{namespace}/lock-batch"]?.post?.responses["200"]?.content).toHaveProperty("application/x-ndjson");
    expect(doc.paths["/metrics"]?.get?.responses["200"]?.content).toHaveProperty("text/plain");
    expect(doc.paths["/v1/namespaces/{namespace}/revoke"]?.post?.responses).toHaveProperty("403");
    expect(doc.paths["/v1/namespaces/{namespace}/revoke"]?.post?.responses["403"]?.content).toEqual({ "application/json": { schema: { $ref: "#/components/schemas/ErrorBody" } } });
    expect(doc.paths["/v1/events"]?.get?.responses["200"]?.content).toEqual({ "application/json": { schema: { $ref: "#/components/schemas/EventsResponse" } } });
    expect(doc.paths["/v1/cluster/members"]?.get?.responses["200"]?.content).toEqual({ "application/json": { schema: { $ref: "#/components/schemas/ClusterMembersResponse" } } });
    expect(doc.paths["/v1/cluster/members"]?.get?.responses).toHaveProperty("401");
    expect(doc.paths["/ui"]?.get?.responses["200"]?.content).toHaveProperty("text/html");
    const locks = doc.paths["/v1/namespaces/{namespace}/locks"]?.get as unknown as { parameters: { name: string; schema: { enum?: string[] } }[] };
    expect(locks.parameters.map((p) => p.name)).toEqual(["namespace", "view", "prefix", "contended", "cursor", "limit"]);
    expect(locks.parameters[1]?.schema.enum).toEqual(["descriptors", "watchers", "immutable"]);
  });

  it("openapi.json's component schemas accept the golden fixtures too", () => {
    const doc = read(join(root, "openapi.json")) as { components: { schemas: Record<string, object> } };
    const ajv = new Ajv2020({ strict: false });
    ajv.addSchema({ $id: "urn:leasehold:openapi", $defs: doc.components.schemas });
    const componentOf = new Map(PROTOCOL_BODIES.map((b) => [`${b.name}.schema.json`, b.component]));
    for (const fixture of readdirSync(fixturesDir)) {
      const component = componentOf.get(schemaFileOf(fixture));
      expect(component, fixture).toBeDefined();
      const validate = ajv.getSchema(`urn:leasehold:openapi#/$defs/${component}`);
      expect(validate?.(read(join(fixturesDir, fixture))), fixture).toBe(true);
    }
  });
});
