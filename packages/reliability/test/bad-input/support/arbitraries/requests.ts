import fc from "fast-check";
import { encodeRequest } from "../raw-http.js";

/** Protocol operations, as they appear in paths. */
export const OPS = ["lock", "unlock", "refresh", "timestamps", "transactions/start", "immutable-timestamp"] as const;
/** One of {@link OPS}. */
export type Op = (typeof OPS)[number];

/** A JSON value as the suite builds it (plain data, no prototypes). */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
/** A JSON object body. */
export type JsonObject = { [key: string]: Json };

/** A request body that is valid for `op` (and therefore must never be sent unmodified). */
export interface ValidBody {
  readonly op: Op;
  readonly value: JsonObject;
}

const descriptor = fc.string({ minLength: 1, maxLength: 12 });
const lockSpec: fc.Arbitrary<JsonObject> = fc.oneof(
  fc.record({ descriptor, mode: fc.constantFrom("exclusive", "shared") }),
  fc.record({ descriptor, mode: fc.constant("permit"), limit: fc.integer({ min: 1, max: 1_000_000 }) }),
);

/** Valid `lock` bodies: 1..4 unique descriptors, optional fields sometimes present. */
export const validLockBody: fc.Arbitrary<ValidBody> = fc
  .record(
    {
      requestId: fc.string({ minLength: 1, maxLength: 16 }),
      locks: fc.uniqueArray(lockSpec, { minLength: 1, maxLength: 4, selector: (s) => s.descriptor }),
      acquireTimeoutMs: fc.integer({ min: 0, max: 50 }),
      behavior: fc.constantFrom("all-or-none", "as-many-as-possible"),
      clientDescription: fc.string({ maxLength: 20 }),
    },
    { requiredKeys: ["locks"] },
  )
  .map((value) => ({ op: "lock" as const, value: value as JsonObject }));

/** Valid bodies of every operation. */
export const validBody: fc.Arbitrary<ValidBody> = fc.oneof(
  validLockBody,
  fc.record({ op: fc.constantFrom("unlock" as const, "refresh" as const), value: fc.record({ tokens: fc.array(fc.string({ minLength: 1, maxLength: 24 }), { minLength: 1, maxLength: 3 }) }) }),
  fc.record({ op: fc.constant("timestamps" as const), value: fc.record({ count: fc.integer({ min: 1, max: 10_000 }) }) }),
  fc.record({ op: fc.constant("transactions/start" as const), value: fc.record({ count: fc.integer({ min: 1, max: 1_000 }) }) }),
  fc.constant({ op: "immutable-timestamp" as const, value: {} }),
);

/** Options of {@link postRequest}. */
export interface PostOptions {
  readonly contentType?: string | null | undefined;
  readonly extraHeaders?: readonly (readonly [string, string])[] | undefined;
  readonly method?: string | undefined;
}

/** A `POST /v1/namespaces/{namespace}/{op}` request with `body`, as raw bytes. */
export function postRequest(namespace: string, op: string, body: Buffer | string, options: PostOptions = {}): Buffer {
  const contentType = options.contentType === undefined ? "application/json" : options.contentType;
  const headers: (readonly [string, string])[] = contentType === null ? [] : [["content-type", contentType]];
  headers.push(...(options.extraHeaders ?? []));
  return encodeRequest({ method: options.method ?? "POST", target: `/v1/namespaces/${namespace}/${op}`, headers, body: typeof body === "string" ? Buffer.from(body, "utf8") : body });
}
