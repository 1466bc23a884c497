/** The q-quantile (0..1) of `values` by nearest rank; sorts a copy. NaN for no values. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}

/** Round to `digits` significant decimals, for readable figures. */
export function round(value: number, digits = 3): number {
  if (!Number.isFinite(value)) return value;
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** Nanoseconds since an arbitrary origin, as a number. */
export function nowNs(): number {
  return Number(process.hrtime.bigint());
}

/** Milliseconds since an arbitrary origin, monotonic. */
export function nowMs(): number {
  return performance.now();
}
