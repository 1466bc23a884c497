import type pg from "pg";

/** How the PostgreSQL coordinator runs one named statement (timed, on its pool). */
export type RunStatement = <R extends pg.QueryResultRow>(name: string, text: string, values?: unknown[]) => Promise<R[]>;
