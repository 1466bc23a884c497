import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, it } from "vitest";
import { startServer, type RunningServer } from "../../src/start-server.js";
import { deepNestingCases, hugeArrayCases, invalidUtf8Cases, malformedJsonCases, oversizeBodyCases } from "./support/arbitraries/json-cases.js";
import { framingCases, slowCases } from "./support/arbitraries/framing-cases.js";
import { contentTypeCases, headerCases, methodCases, pathCases } from "./support/arbitraries/http-cases.js";
import { nullCases, numberCases, prototypeKeyCases, wrongTypeCases } from "./support/arbitraries/schema-cases.js";
import { oversizeDescriptorCases, unicodeCases } from "./support/arbitraries/unicode-cases.js";
import type { BadCase, Category } from "./support/cases.js";
import { runs, SOAK, WRITE_REPORT } from "./support/mode.js";
import { runBadInput } from "./support/run-batch.js";
import { Tally } from "./support/tally.js";
import { writeReport } from "./support/write-report.js";
import type fc from "fast-check";

interface Plan {
  readonly category: Category;
  readonly cases: (namespace: string) => fc.Arbitrary<BadCase>;
  readonly quick: number;
  readonly soak: number;
}

/** Cases per category: about 3,000 in quick mode, about 45,000 in soak mode. */
const PLANS: readonly Plan[] = [
  { category: "malformed-json", cases: malformedJsonCases, quick: 400, soak: 6_000 },
  { category: "invalid-utf8", cases: invalidUtf8Cases, quick: 200, soak: 3_000 },
  { category: "deep-nesting", cases: deepNestingCases, quick: 150, soak: 2_000 },
  { category: "huge-arrays", cases: hugeArrayCases, quick: 20, soak: 300 },
  { category: "oversize-bodies", cases: oversizeBodyCases, quick: 10, soak: 150 },
  { category: "wrong-types", cases: wrongTypeCases, quick: 400, soak: 6_000 },
  { category: "nulls", cases: nullCases, quick: 200, soak: 2_500 },
  { category: "unicode", cases: unicodeCases, quick: 300, soak: 4_000 },
  { category: "prototype-keys", cases: prototypeKeyCases, quick: 250, soak: 3_000 },
  { category: "numbers", cases: numberCases, quick: 250, soak: 3_500 },
  { category: "oversize-descriptors", cases: oversizeDescriptorCases, quick: 100, soak: 1_500 },
  { category: "content-types", cases: contentTypeCases, quick: 200, soak: 3_000 },
  { category: "headers", cases: headerCases, quick: 150, soak: 2_500 },
  { category: "paths", cases: pathCases, quick: 300, soak: 4_000 },
  { category: "methods", cases: methodCases, quick: 150, soak: 2_500 },
  { category: "framing", cases: framingCases, quick: 200, soak: 3_000 },
  { category: "slow-bodies", cases: (ns) => slowCases(ns, "slow-bodies"), quick: 8, soak: 150 },
  { category: "slow-headers", cases: (ns) => slowCases(ns, "slow-headers"), quick: 8, soak: 150 },
];

const REPORT_PATH = fileURLToPath(new URL("../../../../docs/reliability.md", import.meta.url));

describe(`bad input over real sockets (${SOAK ? "soak" : "quick"} mode)`, () => {
  const tally = new Tally();
  const started = performance.now();
  let server: RunningServer;

  beforeAll(async () => {
    // A lease far longer than the run: nothing lapses on its own, so any change is the input's doing.
    server = await startServer({ leaseMs: 3_600_000 });
  });
  afterAll(async () => {
    await server.close();
    if (WRITE_REPORT) writeReport({ path: REPORT_PATH, mode: SOAK ? "soak" : "quick", seconds: (performance.now() - started) / 1000, tally });
  });

  for (const plan of PLANS) {
    const numRuns = runs(plan.quick, plan.soak);
    it(`${plan.category}: ${numRuns} cases answer their 4xx and change nothing`, async () => {
      await runBadInput({ server, tally, prefix: `bad-${plan.category}`, cases: plan.cases, numRuns });
    }, SOAK ? 900_000 : 30_000);
  }
});
