import type { Static, TSchema } from "@sinclair/typebox";
import type { OptionalUndefined } from "./optional-undefined.js";
import type * as S from "./inspection-schemas.js";

/** The type a schema describes, optional fields accepting `undefined` (as in types.ts). */
type Wire<T extends TSchema> = OptionalUndefined<Static<T>>;

/** `descriptors`, `watchers` or `immutable`: what a `GET …/locks` page lists. */
export type InspectionView = (typeof S.INSPECTION_VIEWS)[number];
/** Counts of one namespace. */
export type NamespaceSummary = Wire<typeof S.NamespaceSummarySchema>;
/** Answer of `GET /v1/namespaces`. */
export type NamespacesResponse = Wire<typeof S.NamespacesResponseSchema>;
/** A holder of a descriptor (a token, or a request still acquiring). */
export type LockHolder = Wire<typeof S.LockHolderSchema>;
/** A queued request of a descriptor. */
export type LockWaiter = Wire<typeof S.LockWaiterSchema>;
/** One descriptor of a `descriptors` page. */
export type DescriptorInspection = Wire<typeof S.DescriptorInspectionSchema>;
/** One waiting as-many-as-possible request. */
export type WatcherInspection = Wire<typeof S.WatcherInspectionSchema>;
/** One immutable-timestamp lock. */
export type ImmutableLockInspection = Wire<typeof S.ImmutableLockInspectionSchema>;
/** A `descriptors` page. */
export type DescriptorsPage = Wire<typeof S.DescriptorsPageSchema>;
/** A `watchers` page. */
export type WatchersPage = Wire<typeof S.WatchersPageSchema>;
/** An `immutable` page. */
export type ImmutableLocksPage = Wire<typeof S.ImmutableLocksPageSchema>;
/** Answer of `GET /v1/namespaces/{namespace}/locks`. */
export type NamespaceLocksResponse = Wire<typeof S.NamespaceLocksResponseSchema>;
/** Body of `POST /v1/namespaces/{namespace}/revoke`. */
export type RevokeRequest = Wire<typeof S.RevokeRequestSchema>;
/** One holder a revoke released. */
export type RevokedHolder = Wire<typeof S.RevokedHolderSchema>;
/** Answer of `revoke`. */
export type RevokeResponse = Wire<typeof S.RevokeResponseSchema>;

/** The query of `GET …/locks`, parsed (see `parseNamespaceLocksQuery`). */
export interface NamespaceLocksQuery {
  /** What to list. Default `descriptors`. */
  readonly view: InspectionView;
  /** Only descriptors starting with this. Default: none (every descriptor). */
  readonly prefix?: string | undefined;
  /** Only descriptors somebody waits for. Default false. */
  readonly contended: boolean;
  /** Resume after this entry (a descriptor, a start timestamp, a watcher's serial). Default: from the start. */
  readonly cursor?: string | undefined;
  /** Entries per page, 1..1,000. Default 100: a screenful, cheap to build even in a huge namespace. */
  readonly limit: number;
}

/** The query of `GET /v1/namespaces`, parsed (see `parseNamespacesQuery`). */
export interface NamespacesQuery {
  /** List namespaces after this name. Default: from the start. */
  readonly cursor?: string | undefined;
  /** Namespaces per page, 1..1,000. Default 1,000. */
  readonly limit: number;
}
