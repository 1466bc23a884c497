import { fileURLToPath } from "node:url";

/** Where section results are kept (committed, so the report can be rebuilt from any subset of runs). */
export const RESULTS_DIR = fileURLToPath(new URL("../../results/", import.meta.url));

/** The generated report. */
export const REPORT_PATH = fileURLToPath(new URL("../../../../docs/reliability.md", import.meta.url));
