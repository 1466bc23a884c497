/**
 * fast-check's `seed` parameter when a seed was given, nothing otherwise (fast-check then draws one
 * and prints it on failure). Spread into its parameters: fast-check types `seed` as `seed?: number`,
 * so passing `seed: undefined` is refused under `exactOptionalPropertyTypes`.
 */
export function seedParameter(seed: number | undefined): { readonly seed?: number } {
  return seed === undefined ? {} : { seed };
}
