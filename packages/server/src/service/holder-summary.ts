import type { ActivityHolder, RevokedHolder } from "@leasehold/protocol";

/**
 * Summarise a revoked holder as logs and the activity feed name it (the protocol's
 * `ActivityHolder`, so a log line and a feed event say the same thing): a descriptor count and the
 * first one instead of the whole list, never a token.
 */
export function summarizeHolder(h: RevokedHolder): ActivityHolder {
  return {
    fingerprint: h.fingerprint,
    clientDescription: h.clientDescription,
    descriptors: h.descriptors.length,
    firstDescriptor: h.descriptors[0],
    startTimestamp: h.startTimestamp,
    heldForMs: h.heldForMs,
    acquiring: h.acquiring,
  };
}
