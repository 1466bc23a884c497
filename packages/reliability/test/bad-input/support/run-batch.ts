import fc from "fast-check";
import { expect } from "vitest";
import type { RunningServer } from "@leasehold/server";
import type { BadCase } from "./cases.js";
import { checkAnswer } from "./check-answer.js";
import { sendRaw } from "./raw-http.js";
import { seedNamespace, stateOf } from "./seeded-namespace.js";
import type { Tally } from "./tally.js";
import { SEED } from "./runs.js";
import { seedParameter } from "../../../src/seed-parameter.js";

/** Most cases run against one seeding: well inside the 60 s the seeded waiters wait. */
const CASES_PER_SEEDING = 400;

/** Options of {@link runBadInput}. */
export interface BatchOptions {
  readonly server: RunningServer;
  readonly tally: Tally;
  /** Namespace prefix; each seeding gets a fresh namespace under it. */
  readonly prefix: string;
  /** The generator, given the namespace it should target. */
  readonly cases: (namespace: string) => fc.Arbitrary<BadCase>;
  readonly numRuns: number;
  /** Most cases per seeding (default 400); slow cases need fewer to stay inside the waiters' 60 s. */
  readonly perSeeding?: number | undefined;
  /** Client-side wait for each answer. Default 10 s. */
  readonly timeoutMs?: number | undefined;
}

async function expectHealthy(server: RunningServer): Promise<void> {
  const res = await fetch(`${server.url}/v1/health`);
  expect(res.status).toBe(200);
  expect(((await res.json()) as { status: string }).status).toBe("ok");
}

/**
 * Send `numRuns` generated cases, in batches, each against a freshly seeded namespace. Every case:
 * the answer is checked ({@link checkAnswer}) and the namespace's snapshot and the service's
 * metrics must equal those taken before the batch. After each batch `/v1/health` must answer.
 * A failure is counted in the tally as a violation and then fails the test (fast-check shrinks it
 * and prints the seed; replay it with `LEASEHOLD_SEED`).
 */
export async function runBadInput(options: BatchOptions): Promise<void> {
  const { server, tally, prefix, numRuns, timeoutMs = 10_000 } = options;
  const port = Number(new URL(server.url).port);
  let remaining = numRuns;
  for (let batch = 0; remaining > 0; batch++) {
    const runs = Math.min(options.perSeeding ?? CASES_PER_SEEDING, remaining);
    remaining -= runs;
    const seeded = await seedNamespace(server, `${prefix}-${batch}`);
    const before = stateOf(server, seeded.namespace);
    let sent = 0;
    try {
      await fc.assert(
        fc.asyncProperty(options.cases(seeded.namespace), async (testCase) => {
          const answer = await sendRaw(port, testCase.pieces, { delayMs: testCase.delayMs, endAfterWrite: testCase.endAfterWrite, timeoutMs });
          tally.record(testCase, answer);
          try {
            checkAnswer(testCase, answer);
            expect(stateOf(server, seeded.namespace), `state changed by ${testCase.category}: ${testCase.what}`).toEqual(before);
            if (++sent % 100 === 0) await expectHealthy(server);
          } catch (err) {
            tally.violation(testCase.category);
            throw err;
          }
        }),
        // No shrinking: once a case has changed the state every later case fails too, so a shrunk
        // counterexample would name an innocent case. The first failing case is the culprit.
        { numRuns: runs, ...seedParameter(SEED === undefined ? undefined : SEED + batch), endOnFailure: true },
      );
      await expectHealthy(server);
      expect(stateOf(server, seeded.namespace)).toEqual(before);
    } finally {
      await seeded.clear();
    }
  }
}
