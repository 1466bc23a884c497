import type { ActivityHolder, RevokedHolder } from "@leasehold/protocol";

/**
 * A released holder as logs and the activity feed name it: counts and the first descriptor, never
 * a token. The protocol's `ActivityHolder`, so a log line and a feed event say the same thing.
 */
export type HolderSummary = ActivityHolder;

/** Summarise a revoked holder: a descriptor count and the first one instead of the whole list. */
export function summarizeHolder(h: RevokedHolder): HolderSummary {
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
