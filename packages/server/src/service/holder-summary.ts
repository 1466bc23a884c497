import type { RevokedHolder } from "@leasehold/protocol";

/** A released holder as logs and the activity feed name it: counts and the first descriptor, never a token. */
export interface HolderSummary {
  readonly fingerprint?: string | undefined;
  readonly clientDescription?: string | undefined;
  readonly descriptors: number;
  readonly firstDescriptor?: string | undefined;
  readonly startTimestamp?: number | undefined;
  readonly heldForMs: number;
  readonly acquiring?: true | undefined;
}

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
