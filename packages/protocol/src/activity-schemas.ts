import { Type } from "@sinclair/typebox";
import { RevokedHolderSchema } from "./inspection-schemas.js";
import { LIMITS } from "./limits.js";
import { DescriptorSchema } from "./schemas.js";

/**
 * Schemas of the activity feed, `GET /v1/events` (docs/protocol.md "Activity feed and status
 * page"): a polled ring buffer of lapses and revocations plus the per-second grant history, what
 * the status page polls. Holders are named by fingerprint, never by token.
 */
const strict = { additionalProperties: false } as const;
const Millis = Type.Integer({ minimum: 0 });
const Count = Type.Integer({ minimum: 0 });
const Seq = Type.Integer({ minimum: 1 });
const Namespace = Type.String({ minLength: 1, maxLength: 64 });

/**
 * A released holder as an event names it: a revoked holder ({@link RevokedHolderSchema}) with a
 * descriptor count and the first descriptor instead of the whole list, never the token.
 */
export const ActivityHolderSchema = Type.Composite(
  [Type.Omit(RevokedHolderSchema, ["descriptors"]), Type.Object({ descriptors: Count, firstDescriptor: Type.Optional(DescriptorSchema) })],
  strict,
);

/** A token released because nobody refreshed it in time. */
export const LapseEventSchema = Type.Composite(
  [Type.Object({ seq: Seq, at: Millis, kind: Type.Literal("lapse"), namespace: Namespace }), ActivityHolderSchema],
  strict,
);

/** Most holders a revoke event itemises (`released` is always the full count). */
export const MAX_HOLDERS_PER_REVOKE_EVENT = 20;

/** A revoke that released something. */
export const RevokeEventSchema = Type.Object(
  {
    seq: Seq,
    at: Millis,
    kind: Type.Literal("revoke"),
    namespace: Namespace,
    reason: Type.Optional(Type.String({ maxLength: LIMITS.maxClientDescriptionLength })),
    released: Type.Integer({ minimum: 1 }),
    holders: Type.Array(ActivityHolderSchema, { maxItems: MAX_HOLDERS_PER_REVOKE_EVENT }),
  },
  strict,
);

/** A wait in ms as the server measured it (its monotonic clock): fractional, unlike the integer durations of inspection. */
const WaitMs = Type.Number({ minimum: 0 });

/** One completed second of the grant and wait history (`at` in Unix seconds). */
export const ActivitySecondSchema = Type.Object(
  {
    at: Count,
    grants: Count,
    waits: Type.Optional(Type.Object({ count: Type.Integer({ minimum: 1 }), p50Ms: WaitMs, p99Ms: WaitMs, maxMs: WaitMs }, strict)),
  },
  strict,
);

/** Answer of `GET /v1/events?after=<seq>`. */
export const EventsResponseSchema = Type.Object(
  {
    events: Type.Array(Type.Union([LapseEventSchema, RevokeEventSchema])),
    nextSeq: Count,
    seconds: Type.Optional(Type.Array(ActivitySecondSchema, { maxItems: 120 })),
    canRevoke: Type.Boolean(),
  },
  strict,
);
