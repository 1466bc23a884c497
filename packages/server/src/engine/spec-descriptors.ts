import type { LockSpec } from "@leasehold/protocol";
import { modeCode } from "./lock-mode-codes.js";
import type { NamespaceState } from "./namespace-state.js";

// Questions and clean-up over the descriptors a request's specs name, before or beside the grant
// machinery of `LockTable`.

/** Drop the permit descriptors of `specs` that nothing holds, queues on or watches. */
export function forgetIdle(ns: NamespaceState, specs: readonly LockSpec[]): void {
  for (let i = 0; i < specs.length; i++) {
    const spec = specs[i] as LockSpec;
    if (spec.limit === undefined) continue;
    const d = ns.descriptors.get(spec.descriptor);
    if (d !== undefined && d.isIdle()) ns.retire(d);
  }
}

/** True when a new request could take every descriptor of `specs` in its mode now: each free or compatible, nobody queued ahead. */
export function allGrantableNow(ns: NamespaceState, specs: readonly LockSpec[]): boolean {
  for (let i = 0; i < specs.length; i++) {
    const spec = specs[i] as LockSpec;
    const d = ns.descriptors.get(spec.descriptor);
    if (d !== undefined && !d.grantableNow(modeCode(spec.mode))) return false;
  }
  return true;
}
