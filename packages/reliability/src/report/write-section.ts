import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPORT_PATH, RESULTS_DIR, TEXT_DIR } from "./paths.js";
import { renderReport } from "./render-report.js";
import type { SectionResult } from "./section-result.js";

/** Read every section result kept in `dir`. */
export function readSections(dir: string = RESULTS_DIR): SectionResult[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith(".json"));
  } catch {
    return [];
  }
  return names.map((n) => JSON.parse(readFileSync(join(dir, n), "utf8")) as SectionResult);
}

/** The hand-written parts of the report in `dir` (every `.md`, in file-name order). */
export function readTexts(dir: string = TEXT_DIR): string[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith(".md")).sort();
  } catch {
    return [];
  }
  return names.map((n) => readFileSync(join(dir, n), "utf8"));
}

/**
 * Store one section's result and rebuild the report from all stored results and the hand-written parts. The paths default to
 * the repository's own (`packages/reliability/results/`, `docs/reliability.md`); tests pass scratch ones.
 */
export function writeSection(result: SectionResult, paths: { resultsDir?: string | undefined; reportPath?: string | undefined; textDir?: string | undefined } = {}): void {
  const dir = paths.resultsDir ?? RESULTS_DIR;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${result.id}.json`), `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(paths.reportPath ?? REPORT_PATH, renderReport(readSections(dir), readTexts(paths.textDir)));
}
