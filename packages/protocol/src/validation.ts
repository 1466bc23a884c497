import type { TSchema, Static } from "@sinclair/typebox";
import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";
import { ValueErrorType, type ValueError } from "@sinclair/typebox/errors";
import { LeaseholdError } from "./errors.js";
import { LIMITS, NAMESPACE_PATTERN } from "./limits.js";
import * as A from "./activity-schemas.js";
import * as I from "./inspection-schemas.js";
import * as S from "./schemas.js";
import * as W from "./wait-and-lease-schemas.js";
import * as LW from "./lock-watch-schemas.js";
import * as CM from "./cluster-members-schemas.js";
import type { RevokeRequest } from "./inspection-types.js";
import type { LockRequest, WaitForLocksRequest } from "./types.js";
import { utf8ByteLength } from "./utf8.js";

/** One problem found in a request: where (`locks[2].mode`, or `(body)`) and what. */
export interface ValidationProblem {
  /** Field path in JavaScript notation; `(body)` for the body as a whole. */
  readonly path: string;
  /** What is wrong there, in words a person can act on. */
  readonly message: string;
}

/** `/locks/0/mode` → `locks[0].mode`; the root becomes `(body)`. */
export function formatPath(pointer: string): string {
  if (pointer === "") return "(body)";
  let out = "";
  for (const raw of pointer.slice(1).split("/")) {
    const part = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (/^\d+$/.test(part)) out += `[${part}]`;
    else out += out === "" ? part : `.${part}`;
  }
  return out;
}

function describe(e: ValueError): string {
  const schema = e.schema as Record<string, unknown>;
  if (e.value === null && e.type !== ValueErrorType.ObjectAdditionalProperties) {
    return "must not be null (omit the field to use its default)";
  }
  switch (e.type) {
    case ValueErrorType.ObjectAdditionalProperties:
      return "is not a known field";
    case ValueErrorType.ObjectRequiredProperty:
      return "is required";
    case ValueErrorType.Union: {
      const options = (schema.anyOf as { const?: unknown }[] | undefined)?.map((o) => o.const);
      return options && options.every((o) => typeof o === "string")
        ? `must be one of ${options.join(", ")} (got ${shown(e.value)})`
        : "does not match any allowed shape";
    }
    case ValueErrorType.Literal:
      return `must be ${JSON.stringify(schema.const)}`;
    case ValueErrorType.Integer:
      return `must be an integer (got ${shown(e.value)})`;
    case ValueErrorType.IntegerMinimum:
    case ValueErrorType.IntegerMaximum:
      return `must be between ${String(schema.minimum ?? "-∞")} and ${String(schema.maximum ?? "∞")} (got ${shown(e.value)})`;
    case ValueErrorType.Boolean:
      return `must be a boolean, true or false (got ${typeName(e.value)})`;
    case ValueErrorType.String:
      return `must be a string (got ${typeName(e.value)})`;
    case ValueErrorType.StringMinLength:
      return `must be at least ${String(schema.minLength)} characters long`;
    case ValueErrorType.StringMaxLength:
      return `must be at most ${String(schema.maxLength)} characters long`;
    case ValueErrorType.StringPattern:
      // A fingerprint's value is never echoed: what was pasted there may be the token itself.
      return schema.pattern === "^[0-9a-f]{16}$"
        ? "must be a token fingerprint: 16 lower-case hexadecimal digits (send the fingerprint an inspection page or log line shows, never the token)"
        : `must match ${String(schema.pattern)} (got ${shown(e.value)})`;
    case ValueErrorType.Array:
      return `must be an array (got ${typeName(e.value)})`;
    case ValueErrorType.ArrayMinItems:
      return `must have at least ${String(schema.minItems)} entries`;
    case ValueErrorType.ArrayMaxItems:
      return `must have at most ${String(schema.maxItems)} entries (got ${Array.isArray(e.value) ? e.value.length : "?"})`;
    case ValueErrorType.Object:
      return `must be a JSON object (got ${typeName(e.value)})`;
    default:
      return e.message.charAt(0).toLowerCase() + e.message.slice(1);
  }
}

/**
 * A short, safe rendering of a client's value for an error message: never recursive on deep input
 * (a 500,000-level array must not overflow the stack), never longer than 60 characters, and
 * honest about numbers JSON turned into `Infinity`.
 */
export function shown(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : `${value > 0 ? "" : "-"}a number too large to represent`;
  if (value === null || typeof value !== "object") return String(value);
  return Array.isArray(value) ? `an array of ${value.length}` : "an object";
}

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `${typeof value} ${shown(value)}`;
}

/** Collect the schema problems of `value`, at most `limit` of them, most specific first. */
function schemaProblems(check: TypeCheck<TSchema>, value: unknown, limit = 10): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  const seen = new Set<string>();
  for (const e of check.Errors(value)) {
    const path = formatPath(e.path);
    // A failed required property is reported twice by TypeBox (missing, then wrong type): keep one.
    if (seen.has(path)) continue;
    seen.add(path);
    problems.push({ path, message: describe(e) });
    if (problems.length >= limit) break;
  }
  return problems;
}

/** Throw `INVALID_ARGUMENT` naming the first problem in its message and all of them in details. */
export function invalid(what: string, problems: readonly ValidationProblem[]): never {
  const first = problems[0] ?? { path: "(body)", message: "is invalid" };
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more problem${problems.length > 2 ? "s" : ""})` : "";
  throw new LeaseholdError("INVALID_ARGUMENT", `${what}: ${first.path} ${first.message}${more}`, {
    path: first.path,
    problems,
  });
}

/** A compiled validator of one schema: `parse` returns the typed value or throws `INVALID_ARGUMENT`. */
export interface Validator<T> {
  /** True when `value` matches the schema (no semantic checks). */
  check(value: unknown): value is T;
  /** The value, typed, or a `LeaseholdError("INVALID_ARGUMENT")` naming the field path. */
  parse(value: unknown): T;
}

function compile<T extends TSchema>(what: string, schema: T, extra?: (v: Static<T>) => ValidationProblem[]): Validator<Static<T>> {
  const check = TypeCompiler.Compile(schema);
  return {
    check: (value: unknown): value is Static<T> => check.Check(value),
    parse(value: unknown): Static<T> {
      if (!check.Check(value)) invalid(what, schemaProblems(check, value));
      if (extra) {
        const problems = extra(value);
        if (problems.length > 0) invalid(what, problems);
      }
      return value;
    },
  };
}

/** Problems of a descriptor beyond its schema: well-formed Unicode, at most 1024 UTF-8 bytes. */
export function descriptorProblem(descriptor: string): string | undefined {
  const bytes = utf8ByteLength(descriptor);
  if (bytes < 0) return "must be well-formed Unicode (it holds a lone surrogate)";
  if (bytes > LIMITS.maxDescriptorBytes) {
    return `must be at most ${LIMITS.maxDescriptorBytes} UTF-8 bytes (got ${bytes})`;
  }
  return undefined;
}

function lockRequestProblems(request: LockRequest): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  const seen = new Map<string, number>();
  request.locks.forEach((spec, i) => {
    const bad = descriptorProblem(spec.descriptor);
    if (bad) problems.push({ path: `locks[${i}].descriptor`, message: bad });
    const first = seen.get(spec.descriptor);
    if (first !== undefined) {
      problems.push({ path: `locks[${i}].descriptor`, message: `repeats the descriptor of locks[${first}]; descriptors must be unique within a request` });
    } else seen.set(spec.descriptor, i);
    if (spec.mode === "permit" && spec.limit === undefined) {
      problems.push({ path: `locks[${i}].limit`, message: "is required for mode permit" });
    }
    if (spec.mode !== "permit" && spec.limit !== undefined) {
      problems.push({ path: `locks[${i}].limit`, message: `is only allowed with mode permit (mode is ${spec.mode})` });
    }
  });
  if (request.max !== undefined && (request.behavior ?? "all-or-none") === "all-or-none") {
    problems.push({ path: "max", message: "is only allowed with behavior as-many-as-possible" });
  }
  return problems;
}

/** A wait's descriptors: well-formed, unique within the request (the rules of `lock`). */
function waitRequestProblems(request: WaitForLocksRequest): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  const seen = new Map<string, number>();
  request.locks.forEach((spec, i) => {
    const bad = descriptorProblem(spec.descriptor);
    if (bad) problems.push({ path: `locks[${i}].descriptor`, message: bad });
    const first = seen.get(spec.descriptor);
    if (first !== undefined) {
      problems.push({ path: `locks[${i}].descriptor`, message: `repeats the descriptor of locks[${first}]; descriptors must be unique within a request` });
    } else seen.set(spec.descriptor, i);
  });
  return problems;
}

function revokeRequestProblems(request: RevokeRequest): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  const given = (request.fingerprints !== undefined ? 1 : 0) + (request.descriptors !== undefined ? 1 : 0);
  if (given !== 1) {
    problems.push({ path: given === 0 ? "fingerprints" : "descriptors", message: given === 0 ? "or descriptors is required (give exactly one of them)" : "must not be given together with fingerprints (give exactly one of them)" });
  }
  request.descriptors?.forEach((descriptor, i) => {
    const bad = descriptorProblem(descriptor);
    if (bad) problems.push({ path: `descriptors[${i}]`, message: bad });
  });
  return problems;
}

function lockWatchesProblems(request: { readonly prefixes: readonly string[] }): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  request.prefixes.forEach((prefix, i) => {
    const bytes = utf8ByteLength(prefix);
    if (bytes < 0) problems.push({ path: `prefixes[${i}]`, message: "must be well-formed Unicode (it holds a lone surrogate)" });
    else if (bytes > LIMITS.maxDescriptorBytes) problems.push({ path: `prefixes[${i}]`, message: `must be at most ${LIMITS.maxDescriptorBytes} UTF-8 bytes (got ${bytes})` });
  });
  return problems;
}

/** Validators of every request body, by operation. */
export const requestValidators = {
  lock: compile("lock request", S.LockRequestSchema, lockRequestProblems),
  unlock: compile("unlock request", S.UnlockRequestSchema),
  refresh: compile("refresh request", S.RefreshRequestSchema),
  timestamps: compile("timestamps request", S.TimestampsRequestSchema),
  "transactions/start": compile("transactions/start request", S.StartTransactionsRequestSchema),
  "immutable-timestamp": compile("immutable-timestamp request", S.ImmutableTimestampRequestSchema),
  // The envelope only: each entry is checked with `lock` on its own, so its problems stay on its line.
  "lock-batch": compile("lock-batch request", S.LockBatchEnvelopeSchema),
  "lock-cancel": compile("lock-cancel request", S.LockCancelRequestSchema),
  "wait-for-locks": compile("wait-for-locks request", W.WaitForLocksRequestSchema, waitRequestProblems),
  "timestamp-leases": compile("timestamp-leases request", W.TimestampLeaseRequestSchema),
  "timestamp-leases/min": compile("timestamp-leases/min request", W.TimestampLeaseMinRequestSchema),
  "lock-watches": compile("lock-watches request", LW.LockWatchesRequestSchema, lockWatchesProblems),
  "lock-events": compile("lock-events request", LW.LockEventsRequestSchema),
  /** Body of `POST /v1/namespaces/{namespace}/revoke` (an admin route, not a `LockService` operation). */
  revoke: compile("revoke request", I.RevokeRequestSchema, revokeRequestProblems),
} as const;

/** Validators of every answer body, by operation; clients and fixture tests use them. */
export const responseValidators = {
  lock: compile("lock answer", S.LockResponseSchema),
  unlock: compile("unlock answer", S.UnlockResponseSchema),
  refresh: compile("refresh answer", S.RefreshResponseSchema),
  timestamps: compile("timestamps answer", S.TimestampsResponseSchema),
  "transactions/start": compile("transactions/start answer", S.StartTransactionsResponseSchema),
  "immutable-timestamp": compile("immutable-timestamp answer", S.ImmutableTimestampResponseSchema),
  /** One NDJSON line of the answer (the answer is a stream of them, not one body). */
  "lock-batch": compile("lock-batch line", S.LockBatchLineSchema),
  "lock-cancel": compile("lock-cancel answer", S.LockCancelResponseSchema),
  "wait-for-locks": compile("wait-for-locks answer", W.WaitForLocksResponseSchema),
  "timestamp-leases": compile("timestamp-leases answer", W.TimestampLeaseResponseSchema),
  "timestamp-leases/min": compile("timestamp-leases/min answer", W.TimestampLeaseMinResponseSchema),
  "lock-watches": compile("lock-watches answer", LW.LockWatchesResponseSchema),
  "lock-events": compile("lock-events answer", LW.LockWatchUpdateSchema),
  health: compile("health answer", S.HealthResponseSchema),
  cluster: compile("cluster answer", S.ClusterResponseSchema),
  /** Answer of `GET /v1/cluster/members`, the whole cluster as the status page shows it. */
  "cluster-members": compile("cluster members answer", CM.ClusterMembersResponseSchema),
  error: compile("error body", S.ErrorBodySchema),
  namespaces: compile("namespaces answer", I.NamespacesResponseSchema),
  locks: compile("locks answer", I.NamespaceLocksResponseSchema),
  revoke: compile("revoke answer", I.RevokeResponseSchema),
  /** Answer of `GET /v1/events`, the activity feed. */
  events: compile("events answer", A.EventsResponseSchema),
} as const;

/** Throw `INVALID_ARGUMENT` unless `namespace` matches {@link NAMESPACE_PATTERN}. */
export function validateNamespace(namespace: unknown): string {
  if (typeof namespace !== "string" || !NAMESPACE_PATTERN.test(namespace)) {
    throw new LeaseholdError(
      "INVALID_ARGUMENT",
      `namespace ${typeof namespace === "string" ? shown(namespace) : typeName(namespace)} is invalid: it must be 1..64 characters of A-Z a-z 0-9 . _ - and start with a letter or digit`,
      { path: "namespace" },
    );
  }
  return namespace;
}
