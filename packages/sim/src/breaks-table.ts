#!/usr/bin/env node
import { TEST_BREAKS, type TestBreak } from "@leasehold/server/internal";
import { checkRunFlags, noRunFlags, setRunFlag, type RunFlags } from "./run-flags.js";
import { runSeed } from "./sim-run.js";

/**
 * `pnpm sim:breaks [--max N] [--only NAME[,NAME]] [--swarm] [--full-wait-resends] [--aimed [--blind-taker]] [--host-crashes]`: for every test break (each one safety rule
 * removed), run seeds 1, 2, … until the first violation or `--max` seeds (default 1,000), and print
 * the table of docs/reliability.md "What the simulator finds": break, invariant(s) violated, seeds
 * until the first violation, seconds. A break not found within `--max` seeds says so: the
 * simulation does not yet reach the interleaving its rule guards. `--swarm`: each seed draws its own
 * odds of lost answers and NOTIFYs (sim-swarm.ts), as `pnpm sim --swarm` does; `--aimed`: half the
 * faults are aimed at a hand-over's moment (sim-aimed.ts), as `pnpm sim --aimed` does; `--blind-taker`
 * (with `--aimed`): those strikes may also lose the NOTIFY and blind the taker's reads of the rows;
 * `--host-crashes`: crashes may be host crashes, as `pnpm sim --host-crashes` does (and
 * `--full-wait-resends` as there: the flags are run-flags.ts's, shared with `pnpm sim`).
 */
function parse(argv: readonly string[]): { max: number; only: TestBreak[]; flags: RunFlags } {
  let max = 1_000;
  const flags = noRunFlags();
  let only = Object.keys(TEST_BREAKS) as TestBreak[];
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag !== undefined && setRunFlag(flags, flag)) continue;
    const value = argv[++i];
    if (flag === "--max" && value !== undefined && /^\d+$/.test(value) && Number(value) > 0) max = Number(value);
    else if (flag === "--only" && value !== undefined) {
      only = value.split(",").map((x) => x.trim()) as TestBreak[];
      const unknown = only.filter((name) => !(name in TEST_BREAKS));
      if (unknown.length > 0) throw new RangeError(`--only: unknown rule(s) ${unknown.join(", ")} (known: ${Object.keys(TEST_BREAKS).join(", ")})`);
    } else throw new RangeError(`unknown option ${JSON.stringify(flag)} or bad value ${JSON.stringify(value)} (pnpm sim:breaks [--max N] [--only NAME[,NAME]] [--swarm] [--full-wait-resends] [--aimed [--blind-taker]] [--host-crashes])`);
  }
  checkRunFlags(flags);
  return { max, only, flags };
}

async function main(): Promise<number> {
  let options: ReturnType<typeof parse>;
  try {
    options = parse(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    return 2;
  }
  process.stdout.write("| break | invariant violated | seeds until the first violation | seconds |\n| --- | --- | ---: | ---: |\n");
  for (const rule of options.only) {
    const started = performance.now();
    let row = `| \`${rule}\` | not found | > ${options.max} |`;
    for (let seed = 1; seed <= options.max; seed++) {
      const { violations } = await runSeed(seed, new Set([rule]), 0, options.flags);
      if (violations.length === 0) continue;
      const invariants = [...new Set(violations.map((v) => v.invariant))].join(", ");
      row = `| \`${rule}\` | ${invariants} (seed ${seed}) | ${seed} |`;
      break;
    }
    process.stdout.write(`${row} ${((performance.now() - started) / 1000).toFixed(0)} |\n`);
  }
  return 0;
}

process.exitCode = await main();
