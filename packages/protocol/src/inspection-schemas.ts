import { Type } from "@sinclair/typebox";
import { LIMITS } from "./limits.js";
import { DescriptorSchema, LockModeSchema, TimestampSchema } from "./schemas.js";

/**
 * Schemas of the inspection and revoke routes (docs/protocol.md "Inspection and revoke", ADR 0006):
 * `GET /v1/namespaces`, `GET /v1/namespaces/{namespace}/locks`, `POST …/revoke`. Answers never
 * carry a lock token, only its fingerprint (see {@link FingerprintSchema}).
 */
const strict = { additionalProperties: false } as const;

/** The views of `GET …/locks`, default first. */
export const INSPECTION_VIEWS = ["descriptors", "watchers", "immutable"] as const;

/** A token's fingerprint: the first 16 lower-case hex digits of SHA-256 over the token's UTF-8 bytes. */
export const FingerprintSchema = Type.String({ pattern: "^[0-9a-f]{16}$" });
const Millis = Type.Integer({ minimum: 0 });
const Count = Type.Integer({ minimum: 0 });
const Description = Type.String({ maxLength: LIMITS.maxClientDescriptionLength });
const Namespace = Type.String({ minLength: 1, maxLength: 64 });
const Cursor = Type.String({ minLength: 1 });

/** Counts of one namespace, in `GET /v1/namespaces` and as the `summary` of a locks page. */
export const NamespaceSummarySchema = Type.Object(
  {
    namespace: Namespace,
    heldLocks: Count,
    heldTokens: Count,
    waitingRequests: Count,
    immutableTimestampLocks: Count,
    oldestHoldMs: Type.Optional(Millis),
    longestWaitMs: Type.Optional(Millis),
  },
  strict,
);

/** Answer of `GET /v1/namespaces`. */
export const NamespacesResponseSchema = Type.Object(
  { namespaces: Type.Array(NamespaceSummarySchema), nextCursor: Type.Optional(Cursor) },
  strict,
);

/** One holder of a descriptor: a granted token, or an all-or-none request still acquiring (`acquiring: true`). */
export const LockHolderSchema = Type.Object(
  {
    mode: LockModeSchema,
    fencingToken: TimestampSchema,
    fingerprint: Type.Optional(FingerprintSchema),
    clientDescription: Type.Optional(Description),
    heldForMs: Millis,
    leaseLeftMs: Type.Optional(Millis),
    acquiring: Type.Optional(Type.Literal(true)),
  },
  strict,
);

/** One queued request of a descriptor, in queue order. */
export const LockWaiterSchema = Type.Object(
  {
    mode: LockModeSchema,
    clientDescription: Type.Optional(Description),
    waitingForMs: Millis,
    deadlineLeftMs: Millis,
  },
  strict,
);

/**
 * Most holders and most waiters listed per descriptor (the counts are always complete): a shared
 * descriptor can have a million holders, and a page must stay bounded.
 */
export const MAX_LISTED_PER_DESCRIPTOR = 100;

/** One descriptor of a `descriptors` page. */
export const DescriptorInspectionSchema = Type.Object(
  {
    descriptor: DescriptorSchema,
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMITS.maxPermitLimit })),
    holderCount: Count,
    holders: Type.Array(LockHolderSchema, { maxItems: 100 }),
    queueLength: Count,
    waiters: Type.Array(LockWaiterSchema, { maxItems: 100 }),
    watchers: Count,
  },
  strict,
);

/** One waiting as-many-as-possible request of a `watchers` page. */
export const WatcherInspectionSchema = Type.Object(
  {
    clientDescription: Type.Optional(Description),
    descriptorCount: Type.Integer({ minimum: 1 }),
    firstDescriptor: DescriptorSchema,
    max: Type.Integer({ minimum: 1, maximum: LIMITS.maxLocksPerRequest }),
    waitingForMs: Millis,
    deadlineLeftMs: Millis,
  },
  strict,
);

/** One immutable-timestamp lock of an `immutable` page. */
export const ImmutableLockInspectionSchema = Type.Object(
  { startTimestamp: TimestampSchema, fingerprint: FingerprintSchema, heldForMs: Millis, leaseLeftMs: Millis },
  strict,
);

/** Answer of `GET …/locks?view=descriptors` (the default view). */
export const DescriptorsPageSchema = Type.Object(
  {
    namespace: Namespace,
    view: Type.Literal("descriptors"),
    summary: NamespaceSummarySchema,
    descriptors: Type.Array(DescriptorInspectionSchema),
    nextCursor: Type.Optional(Cursor),
  },
  strict,
);
/** Answer of `GET …/locks?view=watchers`. */
export const WatchersPageSchema = Type.Object(
  {
    namespace: Namespace,
    view: Type.Literal("watchers"),
    summary: NamespaceSummarySchema,
    watchers: Type.Array(WatcherInspectionSchema),
    nextCursor: Type.Optional(Cursor),
  },
  strict,
);
/** Answer of `GET …/locks?view=immutable`. */
export const ImmutableLocksPageSchema = Type.Object(
  {
    namespace: Namespace,
    view: Type.Literal("immutable"),
    summary: NamespaceSummarySchema,
    immutableTimestampLocks: Type.Array(ImmutableLockInspectionSchema),
    nextCursor: Type.Optional(Cursor),
  },
  strict,
);
/** Answer of `GET /v1/namespaces/{namespace}/locks`: one page of the asked view. */
export const NamespaceLocksResponseSchema = Type.Union([DescriptorsPageSchema, WatchersPageSchema, ImmutableLocksPageSchema]);

/** Body of `revoke`: exactly one of `fingerprints` or `descriptors` (the "exactly one" is checked in validation.ts). */
export const RevokeRequestSchema = Type.Object(
  {
    fingerprints: Type.Optional(Type.Array(FingerprintSchema, { minItems: 1, maxItems: LIMITS.maxRevokeEntries })),
    descriptors: Type.Optional(Type.Array(DescriptorSchema, { minItems: 1, maxItems: LIMITS.maxRevokeEntries })),
    reason: Type.Optional(Type.String({ maxLength: LIMITS.maxClientDescriptionLength })),
  },
  strict,
);

/** One holder released by `revoke`. */
export const RevokedHolderSchema = Type.Object(
  {
    fingerprint: Type.Optional(FingerprintSchema),
    clientDescription: Type.Optional(Description),
    descriptors: Type.Array(DescriptorSchema),
    startTimestamp: Type.Optional(TimestampSchema),
    heldForMs: Millis,
    acquiring: Type.Optional(Type.Literal(true)),
  },
  strict,
);

/** Answer of `revoke`: what it released, and which of the asked entries matched nothing. */
export const RevokeResponseSchema = Type.Object(
  { revoked: Type.Array(RevokedHolderSchema), notFound: Type.Array(Type.String()) },
  strict,
);
