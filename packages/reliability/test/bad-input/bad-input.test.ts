import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "@leasehold/server";
import { deepNestingCases, hugeArrayCases, invalidUtf8Cases, malformedJsonCases, oversizeBodyCases } from "./support/arbitraries/json-cases.js";
import { framingCases, slowCases } from "./support/arbitraries/framing-cases.js";
import { contentTypeCases, headerCases, methodCases, pathCases } from "./support/arbitraries/http-cases.js";
import { nullCases, numberCases, prototypeKeyCases, wrongTypeCases } from "./support/arbitraries/schema-cases.js";
import { oversizeDescriptorCases, unicodeCases } from "./support/arbitraries/unicode-cases.js";
import type { BadCase, Category } from "./support/cases.js";
import { SOAK, WRITE_REPORT } from "../../src/report/index.js";
import { runs } from "./support/runs.js";
import { runBadInput } from "./support/run-batch.js";
import { runControls } from "./support/controls.js";
import { pauseThenFinish, stall } from "./support/stall.js";
import { expectErrorBody } from "./support/check-answer.js";
import { Tally } from "./support/tally.js";
import { writeBadInputSection } from "./support/write-bad-input-section.js";
import type fc from "fast-check";

interface Plan {
  readonly category: Category;
  readonly cases: (namespace: string) => fc.Arbitrary<BadCase>;
  readonly quick: number;
  readonly soak: number;
  /** Cases per seeded namespace, when fewer than the default must fit in the waiters' 60 s. */
  readonly perSeeding?: number | undefined;
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
  { category: "slow-bodies", cases: (ns) => slowCases(ns, "slow-bodies"), quick: 8, soak: 150, perSeeding: 40 },
  { category: "slow-headers", cases: (ns) => slowCases(ns, "slow-headers"), quick: 8, soak: 150, perSeeding: 40 },
];

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
    tally.countUnfinished();
    if (WRITE_REPORT) writeBadInputSection({ mode: SOAK ? "soak" : "quick", seconds: (performance.now() - started) / 1000, tally });
  });

  it(`accepted-input controls: ${runs(40, 400)} generated descriptors at the limits are granted byte for byte`, async () => {
    await tally.guard("accepted-input controls", () => runControls(server, tally, runs(40, 400)));
  });

  it("a client that pauses 1.5 s mid-head or mid-body still gets its ordinary answer", async () => {
    await tally.guard("a client pausing mid-request", async () => {
      const before = server.service.metrics();
      tally.faults += 2;
      const [head, body] = await Promise.all([pauseThenFinish(server, "head", 1_500, "slow"), pauseThenFinish(server, "body", 1_500, "slow")]);
      for (const answer of [head, body]) {
        expect(answer.status).toBe(400);
        expectErrorBody(answer, "INVALID_ARGUMENT");
      }
      expect(server.service.metrics()).toEqual(before);
      tally.observations.push("A client pausing 1.5 s in the middle of its request head or body gets its ordinary answer (400 for the invalid body sent).");
    });
  });

  it.runIf(SOAK)("a client that stalls forever is cut off by the server's timeouts, with a 400 or a close, never a 5xx", async () => {
    await tally.guard("a client stalling for ever", async () => {
      const before = server.service.metrics();
      tally.faults += 2;
      const [head, body] = await Promise.all([stall(server, "head", 150_000, "stall"), stall(server, "body", 170_000, "stall")]);
      for (const { answer } of [head, body]) {
        expect(answer.timedOut).toBe(false);
        if (answer.status !== null) {
          expect(answer.status).toBe(400);
          expectErrorBody(answer, "INVALID_ARGUMENT");
        }
      }
      expect(server.service.metrics()).toEqual(before);
      const outcome = (r: { answer: { status: number | null; body: Buffer }; seconds: number }): string =>
        `${r.answer.status === null ? "the connection was closed without an answer" : `${r.answer.status} ${r.answer.body.toString("utf8").slice(0, 140)}`} after ${r.seconds.toFixed(1)} s`;
      tally.observations.push(`A client that sends 40 bytes of its head and then nothing: ${outcome(head)} (node's headersTimeout, 60 s, checked every 30 s).`);
      tally.observations.push(`A client that sends its head and 5 bytes of body and then nothing: ${outcome(body)} (requestTimeout 120 s, set by startServer).`);
    });
  }, 200_000);

  for (const plan of PLANS) {
    const numRuns = runs(plan.quick, plan.soak);
    it(`${plan.category}: ${numRuns} cases answer their 4xx and change nothing`, async () => {
      await tally.guard(plan.category, () => runBadInput({ server, tally, prefix: `bad-${plan.category}`, cases: plan.cases, numRuns, perSeeding: plan.perSeeding }));
    }, SOAK ? 900_000 : 30_000);
  }
});
