import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { Figure, Results } from "./figures.js";
import { CATALOG } from "./catalog.js";
import { describeMachine } from "./machine.js";

/**
 * Merge new figures into the results file: a figure measured now replaces the one of the same
 * name, others are kept, so running one suite does not erase the rest. The file is written whole
 * through a temp file and rename.
 */
export function mergeResults(path: string, figures: readonly Figure[]): Results {
  let previous: Figure[] = [];
  if (existsSync(path)) {
    try {
      previous = (JSON.parse(readFileSync(path, "utf8")) as Results).figures ?? [];
    } catch {
      previous = [];
    }
  }
  // A figure no suite produces any more (renamed or retired) is dropped rather than kept stale.
  const byName = new Map(previous.filter((f) => Object.hasOwn(CATALOG, f.name)).map((f) => [f.name, f]));
  for (const f of figures) byName.set(f.name, f);
  const results: Results = {
    machine: describeMachine(),
    date: new Date().toISOString(),
    node: process.version,
    figures: [...byName.values()],
  };
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(`${path}.tmp`, `${JSON.stringify(results, null, 2)}\n`);
  renameSync(`${path}.tmp`, path);
  return results;
}
