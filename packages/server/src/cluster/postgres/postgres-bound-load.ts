import type { Coordinator, HeldTerm, LoadedBound } from "../coordinator.js";
import type { LoadedBoundEvent } from "./coordinator-event.js";
import type { RunStatement } from "./run-statement.js";
import { DB_TIME_US } from "./sql-fragments.js";

/** Where {@link boundLoadSql} finds its inputs: the names of the statement's parameters and fence. */
export interface BoundLoadParams {
  /** A CTE (or table) with a row only while the term's lease row is live at its epoch, and locked. */
  readonly fence: string;
  /** The parameter holding the term's epoch (`bigint`). */
  readonly epoch: string;
  /** The parameter holding the namespaces (`text[]`). */
  readonly namespaces: string;
  /** The parameter holding the block to extend each bound by (`bigint`). */
  readonly block: string;
}

/**
 * The CTEs of a statement that loads namespaces' bounds for a term (`Coordinator.loadBounds`, and
 * the adoption of a handed-over shard), to follow the `fence` CTE in one `WITH`: each named
 * namespace's bound row is locked (`FOR UPDATE`) and read, then moved `block` above its stored
 * bound under the term's epoch, its immutable timestamp recorded as the lowest of the stored one
 * and the old bound + 1; a namespace never stored is inserted (0 + `block`, immutable 1). Nothing
 * happens without a row in `fence`, nor to a row a later epoch extended. The last CTE, `loaded`,
 * has one row per namespace extended: `{ namespace, floor, immutable, bound, db_time_us }` as JSON.
 */
export function boundLoadSql(p: BoundLoadParams): string {
  const max = Number.MAX_SAFE_INTEGER;
  return `v AS (SELECT DISTINCT ns FROM unnest(${p.namespaces}::text[]) AS v(ns)),
   o AS (SELECT b.namespace, b.bound, b.immutable FROM bounds b JOIN v ON b.namespace = v.ns
         WHERE b.epoch <= ${p.epoch}::bigint AND EXISTS (SELECT 1 FROM ${p.fence}) FOR UPDATE OF b),
   u AS (UPDATE bounds b SET bound = LEAST(${max}, o.bound + ${p.block}::bigint), epoch = ${p.epoch}::bigint, immutable = LEAST(o.immutable, o.bound + 1)
         FROM o WHERE b.namespace = o.namespace
         RETURNING b.namespace, o.bound AS floor, o.immutable, b.bound),
   i AS (INSERT INTO bounds (namespace, bound, immutable, epoch)
         SELECT v.ns, LEAST(${max}, ${p.block}::bigint), 1, ${p.epoch}::bigint FROM v
         WHERE EXISTS (SELECT 1 FROM ${p.fence}) AND NOT EXISTS (SELECT 1 FROM bounds b WHERE b.namespace = v.ns)
         ON CONFLICT (namespace) DO NOTHING
         RETURNING namespace, 0::bigint AS floor, NULL::bigint AS immutable, bound),
   loaded AS (SELECT coalesce(json_agg(json_build_object('namespace', x.namespace, 'floor', x.floor, 'immutable', x.immutable, 'bound', x.bound, 'db_time_us', ${DB_TIME_US.replace(" AS db_time_us", "")})), '[]'::json) AS bounds
              FROM (SELECT * FROM u UNION ALL SELECT * FROM i) x)`;
}

/** One namespace of {@link boundLoadSql}'s `loaded` as node-postgres parses its JSON. */
interface LoadedRow {
  readonly namespace: string;
  readonly floor: number;
  readonly immutable: number | null;
  readonly bound: number;
  readonly db_time_us: number;
}

/** The bounds of {@link boundLoadSql}'s `loaded` column, each reported to `onCommitted` (when given) as an extension by `term`. */
export function parseLoadedBounds(json: unknown, term: HeldTerm, onCommitted?: ((event: LoadedBoundEvent) => void) | undefined): LoadedBound[] {
  const rows = (Array.isArray(json) ? json : []) as LoadedRow[];
  return rows.map((r) => {
    const loaded: LoadedBound = { namespace: r.namespace, floor: Number(r.floor), immutable: r.immutable === null ? null : Number(r.immutable), to: Number(r.bound) };
    onCommitted?.({ kind: "bound extension", namespace: r.namespace, shard: term.shard, epoch: term.epoch, from: loaded.floor, to: loaded.to, dbTimeUs: Number(r.db_time_us) });
    return loaded;
  });
}

/**
 * The PostgreSQL coordinator's `loadBounds`: {@link boundLoadSql} behind the lease row `FOR SHARE`
 * at the term's epoch (as a bound extension's fence). `unfenced` (TEST ONLY, the `epoch-fence`
 * break) drops the epoch from that fence, so a negative control shows what it refuses.
 */
export function boundLoadStatements(run: RunStatement, unfenced: boolean, onCommitted?: ((event: LoadedBoundEvent) => void) | undefined): Pick<Coordinator, "loadBounds"> {
  return {
    async loadBounds(term, namespaces, block) {
      if (namespaces.length === 0) return [];
      const epoch = unfenced ? "$2::bigint IS NOT NULL" : "epoch = $2";
      const rows = await run<{ bounds: unknown }>(
        "load-bounds",
        `WITH l AS (SELECT 1 FROM leases WHERE shard = $1 AND ${epoch} AND holder IS NOT NULL AND expires_at > clock_timestamp() FOR SHARE),
         ${boundLoadSql({ fence: "l", epoch: "$2", namespaces: "$3", block: "$4" })}
         SELECT bounds FROM loaded`,
        [term.shard, String(term.epoch), [...namespaces], String(block)],
      );
      return parseLoadedBounds(rows[0]?.bounds, term, onCommitted);
    },
  };
}
