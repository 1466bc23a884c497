export type { SectionResult } from "./section-result.js";
export { describeMachine } from "./describe-machine.js";
export { renderReport } from "./render-report.js";
export { readSections, readTexts, writeSection } from "./write-section.js";
export { REPORT_PATH, RESULTS_DIR } from "./paths.js";
export { SOAK, WRITE_REPORT, sized } from "./mode.js";
