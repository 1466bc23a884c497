import { LeaseholdError, validateNamespace } from "@leasehold/protocol";

/**
 * Percent-decode and validate the namespace segment of a route. Malformed percent-encoding is the
 * same client mistake as a bad namespace, so it gets the same 400.
 */
export function decodeNamespace(raw: string): string {
  // Without a `%` there is nothing to decode (and nothing decodeURIComponent could refuse).
  if (!raw.includes("%")) return validateNamespace(raw);
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    throw new LeaseholdError(
      "INVALID_ARGUMENT",
      `namespace ${JSON.stringify(raw.slice(0, 80))} in the path is not valid percent-encoding`,
      { path: "namespace" },
    );
  }
  return validateNamespace(decoded);
}
