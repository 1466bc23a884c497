import { LeaseholdError } from "@leasehold/protocol";

/** Strip HTTP's optional whitespace (SP and HTAB only; String#trim would also eat NBSP, VT, FF). */
function trimHttpWhitespace(part: string): string {
  return part.replace(/^[ \t]+|[ \t]+$/g, "");
}

/**
 * Refuse any body that is not declared `application/json`. Parameters are allowed (clients often
 * add `charset=utf-8`), but a charset other than UTF-8 is refused too: the protocol is UTF-8 only
 * and decoding anything else as UTF-8 would silently change descriptors.
 *
 * @param allowMissing accept a request with no content-type at all (an empty `immutable-timestamp`).
 */
export function checkContentType(header: string | undefined, allowMissing: boolean): void {
  if (header === undefined && allowMissing) return;
  // What clients send (leasehold's own sends the first): accepted without splitting and trimming.
  if (header === "application/json" || header === "application/json; charset=utf-8") return;
  const [mediaType = "", ...parameters] = (header ?? "").split(";").map(trimHttpWhitespace);
  if (mediaType.toLowerCase() !== "application/json") {
    throw new LeaseholdError(
      "UNSUPPORTED_MEDIA_TYPE",
      header === undefined
        ? "the content-type header is missing; send the body as application/json"
        : `content-type ${JSON.stringify(header.slice(0, 100))} is not supported; send the body as application/json`,
      { contentType: header ?? null },
    );
  }
  for (const parameter of parameters) {
    const [name = "", value = ""] = parameter.split("=", 2).map(trimHttpWhitespace);
    if (name.toLowerCase() !== "charset") continue;
    const charset = value.replace(/^"|"$/g, "").toLowerCase();
    if (charset !== "utf-8" && charset !== "utf8") {
      throw new LeaseholdError(
        "UNSUPPORTED_MEDIA_TYPE",
        `charset ${JSON.stringify(charset)} is not supported; JSON bodies must be UTF-8`,
        { contentType: header },
      );
    }
  }
}
