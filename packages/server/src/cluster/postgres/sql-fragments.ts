/**
 * SQL that more than one of the PostgreSQL coordinator's statement files writes into its
 * statements. Plain strings: this module imports nothing, so every statement file may import it
 * without forming a cycle.
 */

/** The statement's database time in microseconds since the epoch (`numeric`, exact; node-postgres answers a string). */
export const DB_TIME_US = "(extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS db_time_us";

/** The assignments that clear a row's standby: every acquisition, hand-over and release starts a term without one. */
export const CLEAR_STANDBY = "standby_id = NULL, standby_incarnation = NULL, in_sync = false, sync_round = 0";
