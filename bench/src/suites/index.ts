import type { Suite } from "../figures.js";
import { httpSuite } from "./http.js";

/** Every suite, in the order `pnpm bench` runs them. */
export const SUITES: readonly Suite[] = [httpSuite];
