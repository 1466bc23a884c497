import type { Static, TSchema } from "@sinclair/typebox";
import type * as A from "./activity-schemas.js";
import type { OptionalUndefined } from "./optional-undefined.js";

/** The type a schema describes, optional fields accepting `undefined` (as in types.ts). */
type Wire<T extends TSchema> = OptionalUndefined<Static<T>>;

/** A released holder as an activity event names it: counts and the first descriptor, never a token. */
export type ActivityHolder = Wire<typeof A.ActivityHolderSchema>;
/** A token released because nobody refreshed it in time. */
export type LapseEvent = Wire<typeof A.LapseEventSchema>;
/** A revoke that released something. */
export type RevokeEvent = Wire<typeof A.RevokeEventSchema>;
/** One lapse or revoke, as `GET /v1/events` lists it. */
export type ActivityEvent = LapseEvent | RevokeEvent;
/** One completed second of the grant and wait history (`at` in Unix seconds). */
export type ActivitySecond = Wire<typeof A.ActivitySecondSchema>;
/** Answer of `GET /v1/events?after=<seq>`. */
export type EventsResponse = Wire<typeof A.EventsResponseSchema>;
