import type { Logger } from "pino";

/** The safety rules a negative control of the reliability suite can switch off (never in production). */
export type TestBreak = "gate" | "epoch-fence" | "lease-wait";

const KNOWN: readonly TestBreak[] = ["gate", "epoch-fence", "lease-wait"];

/**
 * TEST ONLY. The rules named in `LEASEHOLD_TEST_BREAK` (comma-separated: `gate`, `epoch-fence`,
 * `lease-wait`) are switched off, so the cluster fault suite (packages/reliability, section 5) can
 * show that its checks fire without them. Read only in test mode (`--log-level debug`), so a stray
 * variable on a production server changes nothing; when it does act, it says so at `warn`.
 */
export function testBreaks(logger: Logger, env: NodeJS.ProcessEnv = process.env): ReadonlySet<TestBreak> {
  const raw = env.LEASEHOLD_TEST_BREAK;
  if (raw === undefined || raw === "" || !logger.isLevelEnabled("debug")) return new Set();
  const breaks = new Set<TestBreak>();
  for (const name of raw.split(",").map((s) => s.trim())) {
    if (!(KNOWN as readonly string[]).includes(name)) throw new RangeError(`LEASEHOLD_TEST_BREAK: unknown rule ${JSON.stringify(name)} (known: ${KNOWN.join(", ")})`);
    breaks.add(name as TestBreak);
  }
  logger.warn({ breaks: [...breaks] }, "TEST ONLY: cluster safety rules switched off by LEASEHOLD_TEST_BREAK");
  return breaks;
}

/**
 * TEST ONLY. `LEASEHOLD_TEST_RESERVE_BLOCK=<n>` (an integer ≥ 2) makes the timestamp bound's
 * reservation block `n` instead of the default, so a negative control of the reliability suite
 * (the epoch fence, section 5) can make almost every timestamp need its own bound extension. Read
 * only in test mode (`--log-level debug`), like {@link testBreaks}, and said at `warn` when it acts.
 * Answers `undefined` when unset or outside test mode. Throws a RangeError on a bad value.
 */
export function testReserveBlock(logger: Logger, env: NodeJS.ProcessEnv = process.env): number | undefined {
  const raw = env.LEASEHOLD_TEST_RESERVE_BLOCK;
  if (raw === undefined || raw === "" || !logger.isLevelEnabled("debug")) return undefined;
  const block = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(block) || block < 2) {
    throw new RangeError(`LEASEHOLD_TEST_RESERVE_BLOCK must be an integer of at least 2 (got ${JSON.stringify(raw)})`);
  }
  logger.warn({ reserveBlock: block }, "TEST ONLY: timestamp reservation block set by LEASEHOLD_TEST_RESERVE_BLOCK");
  return block;
}
