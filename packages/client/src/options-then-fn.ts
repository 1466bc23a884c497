import { LeaseholdError } from "@leasehold/protocol";

/**
 * The arguments of a call that takes `options, fn` where the options may be left out: `(fn)` or
 * `(options, fn)`. Keeps one argument order everywhere (locks or name, options, work) while
 * letting `mutex.runExclusive(fn)` read as async-mutex users write it. A missing work function is
 * a caller's mistake, said with the call's name, before anything is locked.
 */
export function optionsThenFn<O extends object, F extends (...args: never[]) => unknown>(
  optionsOrFn: O | F | undefined,
  fn: F | undefined,
  call: string,
): [O, F] {
  if (typeof optionsOrFn === "function") {
    if (fn !== undefined) throw new LeaseholdError("INVALID_ARGUMENT", `${call}: options go before the work function, not after it`, { path: "options" });
    return [{} as O, optionsOrFn];
  }
  if (typeof fn !== "function") throw new LeaseholdError("INVALID_ARGUMENT", `${call}: the last argument must be the work function`, { path: "fn" });
  return [optionsOrFn ?? ({} as O), fn];
}
