import type { Cell, KeyValueStore, Version } from "./key-value-store.js";

type Rows = Map<string, Map<string, Version[]>>;

/**
 * A {@link KeyValueStore} in process memory: per table, rows, columns, and each cell's versions
 * sorted by timestamp (a cell rarely has more than a few, so lookups scan from the newest).
 * Nothing is persisted. Every method resolves on a microtask, like a store that never waits.
 */
export class InMemoryKeyValueStore implements KeyValueStore {
  readonly #tables = new Map<string, Rows>();
  readonly #unversioned = new Map<string, Map<string, string>>();

  async latestBefore(table: string, cell: Cell, before: number): Promise<Version | undefined> {
    const versions = this.#cell(table, cell, false);
    if (versions === undefined) return undefined;
    for (let i = versions.length - 1; i >= 0; i--) {
      const v = versions[i]!;
      if (v.timestamp < before) return v;
    }
    return undefined;
  }

  async put(table: string, cell: Cell, timestamp: number, value: string | null): Promise<void> {
    const versions = this.#cell(table, cell, true)!;
    const version: Version = { timestamp, value };
    let i = versions.length;
    while (i > 0 && versions[i - 1]!.timestamp > timestamp) i--;
    if (i > 0 && versions[i - 1]!.timestamp === timestamp) versions[i - 1] = version;
    else versions.splice(i, 0, version);
  }

  async putUnlessExists(table: string, cell: Cell, value: string): Promise<boolean> {
    let values = this.#unversioned.get(table);
    if (values === undefined) this.#unversioned.set(table, (values = new Map()));
    const key = unversionedKey(cell);
    if (values.has(key)) return false;
    values.set(key, value);
    return true;
  }

  async getUnversioned(table: string, cell: Cell): Promise<string | undefined> {
    return this.#unversioned.get(table)?.get(unversionedKey(cell));
  }

  async cells(table: string): Promise<Cell[]> {
    const out: Cell[] = [];
    for (const [row, columns] of this.#tables.get(table) ?? []) {
      for (const [column, versions] of columns) if (versions.length > 0) out.push({ row, column });
    }
    return out;
  }

  async versions(table: string, cell: Cell): Promise<Version[]> {
    return [...(this.#cell(table, cell, false) ?? [])];
  }

  async deleteVersions(table: string, cell: Cell, timestamps: readonly number[]): Promise<void> {
    const columns = this.#tables.get(table)?.get(cell.row);
    const versions = columns?.get(cell.column);
    if (columns === undefined || versions === undefined) return;
    const doomed = new Set(timestamps);
    const kept = versions.filter((v) => !doomed.has(v.timestamp));
    // Drop empty cells and rows so a swept table does not keep growing.
    if (kept.length > 0) columns.set(cell.column, kept);
    else columns.delete(cell.column);
    if (columns.size === 0) this.#tables.get(table)?.delete(cell.row);
  }

  #cell(table: string, cell: Cell, create: boolean): Version[] | undefined {
    let rows = this.#tables.get(table);
    if (rows === undefined) {
      if (!create) return undefined;
      this.#tables.set(table, (rows = new Map()));
    }
    let columns = rows.get(cell.row);
    if (columns === undefined) {
      if (!create) return undefined;
      rows.set(cell.row, (columns = new Map()));
    }
    let versions = columns.get(cell.column);
    if (versions === undefined && create) columns.set(cell.column, (versions = []));
    return versions;
  }
}

// Rows and columns are arbitrary strings; JSON keeps the pair unambiguous.
function unversionedKey(cell: Cell): string {
  return JSON.stringify([cell.row, cell.column]);
}
