import type { RevokeRequest, RevokeResponse } from "@leasehold/protocol";
import type { Logger } from "pino";
import type { LeaseLapse } from "../engine/lease-lapse.js";
import type { RevokeContext } from "./embedded-lock-service.js";
import { summarizeHolder } from "./holder-summary.js";

/** Most released holders itemised in one revoke log line; the count is always complete. */
const MAX_LOGGED_HOLDERS = 100;

/**
 * The lapse warning: which worker died (description, fingerprint), what it held (count, first
 * descriptor) and for how long. Never the token: it is a bearer credential.
 */
export function logLeaseLapse(logger: Logger, namespace: string, descriptors: number, lapse: LeaseLapse): void {
  logger.warn(
    {
      namespace,
      descriptors,
      fingerprint: lapse.fingerprint,
      clientDescription: lapse.clientDescription,
      firstDescriptor: lapse.firstDescriptor,
      startTimestamp: lapse.startTimestamp,
      heldForMs: lapse.heldForMs,
    },
    "lease lapsed: released a token nobody refreshed in time",
  );
}

/**
 * The revoke warning: what was released and why (the request's `reason`), and who asked. One line
 * per revoke, itemising up to {@link MAX_LOGGED_HOLDERS} holders.
 */
export function logRevoke(logger: Logger, namespace: string, request: RevokeRequest, answer: RevokeResponse, context: RevokeContext): void {
  logger.warn(
    {
      namespace,
      reason: request.reason ?? "(none given)",
      client: context.client,
      by: request.fingerprints !== undefined ? "fingerprints" : "descriptors",
      released: answer.revoked.length,
      notFound: answer.notFound.length,
      holders: answer.revoked.slice(0, MAX_LOGGED_HOLDERS).map(summarizeHolder),
    },
    "revoked by an admin: released these holders",
  );
}
