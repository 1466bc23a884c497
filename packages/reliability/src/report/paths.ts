import { fileURLToPath } from "node:url";

/** Where section results are kept (committed, so the report can be rebuilt from any subset of runs). */
export const RESULTS_DIR = fileURLToPath(new URL("../../results/", import.meta.url));

/** The generated report. */
export const REPORT_PATH = fileURLToPath(new URL("../../../../docs/reliability.md", import.meta.url));

/** The report's hand-written parts (Markdown, in file-name order after the sections): they come from no run. */
export const TEXT_DIR = fileURLToPath(new URL("../../report-text/", import.meta.url));
