#!/usr/bin/env node
import { createHash } from "node:crypto";
import { TEST_BREAKS, type TestBreak } from "@leasehold/server/internal";
import { checkRunFlags, noRunFlags, runFlagsText, setRunFlag, type RunFlags } from "./run-flags.js";
import { runSeed } from "./sim-run.js";

/**
 * `pnpm sim [--seeds N] [--seed S] [--break NAME[,NAME]] [--trace K] [--until-violation] [--swarm] [--full-wait-resends] [--aimed [--blind-taker]] [--host-crashes]` (DESIGN.md
 * "Simulation CLI contract"): runs seeds S..S+N-1 (default `--seed 1 --seeds 200`; with
 * `--until-violation`, only until the first seed that finds one, which N then counts), prints a line starting
 * `seed <S>: ` per violation with its replay command and the run's faults, and last
 * `sim: <N> seeds, <V> violations, <T> s, trace <digest of every seed's digest>`. Exits 0 exactly
 * when V is 0. `--swarm` lets each seed draw its own odds of lost answers and NOTIFYs (sim-swarm.ts):
 * another set of runs, for the rare combinations; without it every seed runs as recorded.
 * `--full-wait-resends`: two clients of five re-send a waiting request with its whole wait again.
 * `--aimed`: half the faults are aimed at a hand-over's moment (sim-aimed.ts). `--blind-taker` (only
 * with `--aimed`): a hand-over's row move may also lose its NOTIFY and, for one to two leader leases,
 * the answers of its taker's reads of the lease rows (a `blind` strike).
 * `--host-crashes`: crashes may be host crashes, which also lose what the server sent that has not
 * arrived yet; a quarter of the faults host-crash a leader just after it answered a queued grant.
 */
function parse(argv: readonly string[]): { seed: number; seeds: number; breaks: Set<TestBreak>; trace: number; untilViolation: boolean; flags: RunFlags } {
  const out = { seed: 1, seeds: 200, breaks: new Set<TestBreak>(), trace: 0, untilViolation: false, flags: noRunFlags() };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag !== undefined && setRunFlag(out.flags, flag)) continue;
    const value = argv[i + 1];
    const integer = (name: string, min: number): number => {
      if (value === undefined || !/^\d+$/.test(value) || Number(value) < min) throw new RangeError(`${name} needs an integer of at least ${min} (got ${JSON.stringify(value)})`);
      i++;
      return Number(value);
    };
    if (flag === "--seed") out.seed = integer("--seed", 0);
    else if (flag === "--seeds") out.seeds = integer("--seeds", 1);
    else if (flag === "--trace") out.trace = integer("--trace", 0);
    else if (flag === "--until-violation") out.untilViolation = true;
    else if (flag === "--break") {
      if (value === undefined) throw new RangeError("--break needs a name (or several, comma-separated)");
      for (const name of value.split(",").map((x) => x.trim()).filter((x) => x !== "")) {
        if (!(name in TEST_BREAKS)) throw new RangeError(`--break: unknown rule ${JSON.stringify(name)} (known: ${Object.keys(TEST_BREAKS).join(", ")})`);
        out.breaks.add(name as TestBreak);
      }
      i++;
    } else if (flag === "--help" || flag === "-h") {
      process.stdout.write("pnpm sim [--seeds N] [--seed S] [--break NAME[,NAME]] [--trace K] [--until-violation] [--swarm] [--full-wait-resends] [--aimed [--blind-taker]] [--host-crashes]\n");
      process.exit(0);
    } else throw new RangeError(`unknown option ${JSON.stringify(flag)} (see --help)`);
  }
  checkRunFlags(out.flags);
  return out;
}

async function main(): Promise<number> {
  let options: ReturnType<typeof parse>;
  try {
    options = parse(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    return 2;
  }
  const started = performance.now();
  const digest = createHash("sha256");
  let violations = 0;
  const breakFlag = (options.breaks.size === 0 ? "" : ` --break ${[...options.breaks].join(",")}`) + runFlagsText(options.flags);
  let ran = 0;
  for (let seed = options.seed; seed < options.seed + options.seeds; seed++) {
    const result = await runSeed(seed, options.breaks, options.trace, options.flags);
    ran++;
    digest.update(`${seed} ${result.digest}\n`);
    for (const v of result.violations) {
      violations++;
      process.stdout.write(`seed ${seed}: ${v.invariant}: ${v.detail}\n`);
    }
    if (result.violations.length > 0) {
      process.stdout.write(`  replay: pnpm sim --seed ${seed} --seeds 1${breakFlag} --trace 200\n`);
      if (result.odds !== null) process.stdout.write(`  ${result.odds}\n`);
      for (const f of result.faults) process.stdout.write(`  fault ${f}\n`);
      for (const line of result.trace) process.stdout.write(`  step ${line}\n`);
      if (options.untilViolation) break;
    }
  }
  const seconds = (performance.now() - started) / 1000;
  process.stdout.write(`sim: ${ran} seeds, ${violations} violations, ${seconds.toFixed(1)} s, trace ${digest.digest("hex").slice(0, 16)}\n`);
  return violations === 0 ? 0 : 1;
}

process.exitCode = await main();
