import { Type, type Static } from "@sinclair/typebox";
import { LIMITS } from "./limits.js";
import { HealthClusterSchema } from "./schemas.js";
import type { OptionalUndefined } from "./optional-undefined.js";

/**
 * Schema of `GET /v1/cluster/members` (docs/protocol.md "Cluster members"): the whole cluster as
 * one server sees it, what the status page polls. Members come from the cluster's member table;
 * whether each answers is this server's own recent probe of its `GET /v1/health`. Ages are
 * durations (never wall-clock times), so the reader's clock does not matter.
 */
const strict = { additionalProperties: false } as const;
const Millis = Type.Integer({ minimum: 0 });
const ServerId = Type.String({ minLength: 1 });
const Url = Type.String({ minLength: 1 });

/**
 * A standby of a shard: the server that keeps a copy of its lock table, as the shard's row names it,
 * whether the row marks it in sync, and how far behind it is (known only to the shard's leader,
 * `null` when the answering server could not ask it). The optional fields are absent in older
 * servers' answers.
 */
export const ClusterStandbySchema = Type.Object(
  {
    serverId: ServerId,
    url: Type.Union([Url, Type.Null()]),
    /** The row marks it in sync: it holds every grant a client was told about. */
    inSync: Type.Optional(Type.Boolean()),
    /** Entries it has not acknowledged yet. */
    lagEntries: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()])),
    /** Age of the oldest entry it has not acknowledged (0: none), in ms. */
    lagMs: Type.Optional(Type.Union([Millis, Type.Null()])),
  },
  strict,
);

/** One shard as the answering server knows it: its leader's server id and URL (`null` when it knows of none) and epoch. */
export const ClusterShardViewSchema = Type.Object(
  {
    shard: Type.Integer({ minimum: 0 }),
    leaderServerId: Type.Union([ServerId, Type.Null()]),
    leaderUrl: Type.Union([Url, Type.Null()]),
    epoch: Millis,
    standby: Type.Union([ClusterStandbySchema, Type.Null()]),
  },
  strict,
);

/** One member of the cluster, and whether it answered the answering server's latest probe. */
export const ClusterMemberSchema = Type.Object(
  {
    serverId: ServerId,
    url: Url,
    /** The answering server itself (never probed: it is answering). */
    self: Type.Boolean(),
    /** Its last heartbeat said it takes shards now (false during its join wait). */
    ready: Type.Boolean(),
    /** Since its last heartbeat, on the database clock; `null` when it has no member row (a single server). */
    heartbeatAgeMs: Type.Union([Millis, Type.Null()]),
    /** It answered the latest probe of its `GET /v1/health` with 200 and its own server id. */
    answering: Type.Boolean(),
    /** Since it last answered a probe of the answering server; `null` when it never did since that server started. */
    lastAnswerAgeMs: Type.Union([Millis, Type.Null()]),
    /** Why the latest probe failed (timeout, refused, another server id, a status). */
    problem: Type.Optional(Type.String({ maxLength: 256 })),
    /** Shards it leads in `leaders`. */
    shardsLed: Type.Integer({ minimum: 0 }),
    /**
     * Its part of the cluster's protection as its own health answer gave it (for this server: now);
     * absent when it did not answer, or answered without one (an older server).
     */
    cluster: Type.Optional(HealthClusterSchema),
  },
  strict,
);

/** Answer of `GET /v1/cluster/members`. */
export const ClusterMembersResponseSchema = Type.Object(
  {
    serverId: ServerId,
    shards: Type.Integer({ minimum: 1, maximum: LIMITS.maxShards }),
    leaders: Type.Array(ClusterShardViewSchema),
    members: Type.Array(ClusterMemberSchema),
    /** Set when the member table could not be read this time: `members` is then the last list read (or only this server). */
    memberListError: Type.Optional(Type.String({ maxLength: 512 })),
  },
  strict,
);

/** One shard of a `GET /v1/cluster/members` answer. */
export type ClusterShardView = OptionalUndefined<Static<typeof ClusterShardViewSchema>>;
/** One member of a `GET /v1/cluster/members` answer. */
export type ClusterMember = OptionalUndefined<Static<typeof ClusterMemberSchema>>;
/** Answer of `GET /v1/cluster/members`. */
export type ClusterMembersResponse = OptionalUndefined<Static<typeof ClusterMembersResponseSchema>>;
