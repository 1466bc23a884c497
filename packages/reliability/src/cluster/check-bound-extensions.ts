import type { Violations } from "../violations.js";

/** A shard acquisition as a server logged it in test mode (`acquisition committed`). */
export interface AcquisitionEvent {
  readonly server: number;
  readonly shard: number;
  readonly epoch: number;
  /** The database's `clock_timestamp()` of the acquiring statement, µs since the epoch. */
  readonly dbTimeUs: number;
}

/** A bound extension that took effect, as a server logged it in test mode (`bound extension committed`). */
export interface ExtensionEvent extends AcquisitionEvent {
  readonly namespace: string;
  readonly from: number;
  readonly to: number;
}

/** What the servers' test-mode log lines say about acquisitions and bound extensions. */
export interface BoundEvents {
  readonly acquisitions: readonly AcquisitionEvent[];
  readonly extensions: readonly ExtensionEvent[];
}

/** The check's name, as violations and the report list it. */
export const BOUND_EXTENSIONS_FENCED = "bound extensions fenced by epoch";

/**
 * Collect the `acquisition committed` and `bound extension committed` lines (test mode: the server
 * logs them at debug with the database time of their statement; see `onCommitted` in
 * packages/server/src/cluster/postgres/postgres-coordinator.ts) of every server, `servers[i]`
 * being server i's lines.
 */
export function boundEvents(servers: readonly (readonly Record<string, unknown>[])[]): BoundEvents {
  const acquisitions: AcquisitionEvent[] = [];
  const extensions: ExtensionEvent[] = [];
  servers.forEach((lines, server) => {
    for (const line of lines) {
      if (line.msg === "acquisition committed") {
        acquisitions.push({ server, shard: line.shard as number, epoch: line.epoch as number, dbTimeUs: line.dbTimeUs as number });
      } else if (line.msg === "bound extension committed") {
        extensions.push({
          server,
          shard: line.shard as number,
          epoch: line.epoch as number,
          dbTimeUs: line.dbTimeUs as number,
          namespace: line.namespace as string,
          from: line.from as number,
          to: line.to as number,
        });
      }
    }
  });
  return { acquisitions, extensions };
}

/**
 * No bound extension commits after a newer epoch of its shard was acquired: for every extension
 * under epoch `e` of shard `s` at database time `t`, no acquisition of `s` with an epoch above `e`
 * has a database time before `t`. Both times come from the one database clock, and the two
 * statements serialise on the shard's lease row (the extension reads it `FOR SHARE`, the
 * acquisition updates it), so their order is the order of these times. This is what the epoch
 * condition of the extension guarantees; without it a deposed leader can still move the bound.
 * Returns the extensions checked.
 */
export function checkBoundExtensionsFenced(events: BoundEvents, violations: Violations): number {
  const byShard = new Map<number, AcquisitionEvent[]>();
  for (const a of events.acquisitions) {
    let list = byShard.get(a.shard);
    if (list === undefined) byShard.set(a.shard, (list = []));
    list.push(a);
  }
  for (const x of events.extensions) {
    // The earliest acquisition of a newer epoch of the shard (few acquisitions: a plain scan).
    let newer: AcquisitionEvent | undefined;
    for (const a of byShard.get(x.shard) ?? []) {
      if (a.epoch > x.epoch && (newer === undefined || a.dbTimeUs < newer.dbTimeUs)) newer = a;
    }
    const n = newer;
    if (n === undefined) continue;
    violations.expect(x.dbTimeUs < n.dbTimeUs, BOUND_EXTENSIONS_FENCED, () =>
      `shard ${x.shard}: server ${x.server} extended the bound of ${x.namespace} (${x.from} → ${x.to}) under epoch ${x.epoch} ` +
      `${((x.dbTimeUs - n.dbTimeUs) / 1000).toFixed(1)} ms (database clock) after server ${n.server} acquired epoch ${n.epoch}`,
    );
  }
  return events.extensions.length;
}
