import { Type } from "@sinclair/typebox";
import { LIMITS } from "./limits.js";
import { DescriptorSchema, LeaseSchema, TimestampSchema, TokenSchema } from "./schemas.js";

/**
 * Schemas of the v1 additions `wait-for-locks` and `timestamp-leases` (TimeLock's `waitForLocks`
 * and named minimum-timestamp leases; docs/protocol.md). Kept apart from schemas.ts so each
 * addition stays one file; like every protocol schema, each object refuses unknown properties.
 */
const strict = { additionalProperties: false } as const;

/** The modes a wait may name: a wait queues as a lock in that mode would; permits have no wait. */
export const WAIT_MODES = ["exclusive", "shared"] as const;

export const WaitModeSchema = Type.Union([Type.Literal("exclusive"), Type.Literal("shared")]);

/** One descriptor a wait waits for, in the mode a lock request would ask for it. */
export const WaitSpecSchema = Type.Object({ descriptor: DescriptorSchema, mode: WaitModeSchema }, strict);

/** Body of `wait-for-locks`: the rules of `lock` for `locks`, `requestId` and `acquireTimeoutMs`. */
export const WaitForLocksRequestSchema = Type.Object(
  {
    requestId: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.maxRequestIdLength })),
    locks: Type.Array(WaitSpecSchema, { minItems: 1, maxItems: LIMITS.maxLocksPerRequest }),
    acquireTimeoutMs: Type.Optional(Type.Integer({ minimum: 0, maximum: LIMITS.maxAcquireTimeoutMs })),
  },
  strict,
);

/** Answer of `wait-for-locks`: `free` (each descriptor in turn could have been granted) or `timeout`. */
export const WaitForLocksResponseSchema = Type.Object(
  { status: Type.Union([Type.Literal("free"), Type.Literal("timeout")]) },
  strict,
);

/** A lease name: 1..128 characters, opaque to the server. */
export const LeaseNameSchema = Type.String({ minLength: 1, maxLength: LIMITS.maxLeaseNameLength });

/** Body of `timestamp-leases`: hold a fresh timestamp under `name`, and take `count` more. */
export const TimestampLeaseRequestSchema = Type.Object(
  {
    requestId: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.maxRequestIdLength })),
    name: LeaseNameSchema,
    count: Type.Integer({ minimum: 0, maximum: LIMITS.maxTimestampCount }),
  },
  strict,
);

/** Answer of `timestamp-leases`. */
export const TimestampLeaseResponseSchema = Type.Object(
  {
    token: TokenSchema,
    lease: LeaseSchema,
    /** The timestamp held under the name by `token`. */
    leased: TimestampSchema,
    /** The smallest timestamp held under the name (≤ `leased`). */
    minLeased: TimestampSchema,
    /** `count` fresh timestamps above `leased`: `[start, start + count)` (empty when `count` is 0). */
    timestamps: Type.Object(
      { start: TimestampSchema, count: Type.Integer({ minimum: 0, maximum: LIMITS.maxTimestampCount }) },
      strict,
    ),
  },
  strict,
);

/** Body of `timestamp-leases/min`. */
export const TimestampLeaseMinRequestSchema = Type.Object({ name: LeaseNameSchema }, strict);

/** Answer of `timestamp-leases/min`: the smallest timestamp held under the name, or a fresh one. */
export const TimestampLeaseMinResponseSchema = Type.Object({ minLeased: TimestampSchema }, strict);
