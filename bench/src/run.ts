import { copyFileSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Figure, Results, Suite } from "./figures.js";
import { writeReport } from "./report.js";
import { mergeResults } from "./results.js";
import { SUITES } from "./suites/index.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const args = process.argv.slice(2);
const quick = args.includes("--quick");
const names = args.filter((a) => !a.startsWith("--"));
const unknown = names.filter((n) => !SUITES.some((s) => s.name === n));
if (args.includes("--help") || unknown.length > 0) {
  if (unknown.length > 0) console.error(`unknown suite: ${unknown.join(", ")}`);
  console.error(`usage: pnpm bench [--quick] [suite ...] | pnpm bench --report\nsuites:\n${SUITES.map((s) => `  ${s.name.padEnd(12)} ${s.description}`).join("\n")}`);
  process.exit(unknown.length > 0 ? 2 : 0);
}
// --report: run nothing, only rewrite docs/benchmarks.md from the stored results (after editing the catalog's prose).
const reportOnly = args.includes("--report");
const selected: Suite[] = reportOnly ? [] : names.length > 0 ? SUITES.filter((s) => names.includes(s.name)) : SUITES.filter((s) => s.defaultOn !== false);

const started = performance.now();
const figures: Figure[] = [];
for (const suite of selected) {
  const command = `pnpm bench${quick ? " --quick" : ""} ${suite.name}`;
  console.log(`[bench] ${suite.name}: ${suite.description}`);
  const t0 = performance.now();
  const produced = await suite.run({ quick, command, progress: (m) => console.log(`[bench]   ${m}`) });
  figures.push(...produced);
  console.log(`[bench] ${suite.name} done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
// LEASEHOLD_BENCH_OUT redirects both outputs (CI's smoke run uses it to leave the committed ones alone).
const out = process.env.LEASEHOLD_BENCH_OUT;
const resultsPath = out ? join(out, "latest.json") : `${root}bench/results/latest.json`;
const docsDir = out ? out : `${root}docs`;
if (out && existsSync(`${root}bench/results/latest.json`)) copyFileSync(`${root}bench/results/latest.json`, resultsPath);
// A report-only run leaves the stored results (and their date) exactly as they are.
const results = reportOnly ? (JSON.parse(readFileSync(resultsPath, "utf8")) as Results) : mergeResults(resultsPath, figures);
writeReport(docsDir, results);
console.log(`[bench] wrote ${resultsPath} and ${join(docsDir, "benchmarks.md")} (${figures.length} figures) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
for (const f of figures) console.log(`[bench] ${f.name} = ${f.value} ${f.unit}`);
