import { channel } from "node:diagnostics_channel";
import { SERVER_CHANNELS, type LockAcquiredResponse, type ServerLeaseLapseMessage, type ServerLockGrantMessage } from "@leasehold/protocol";
import type { LeaseLapse } from "../engine/lease-lapse.js";
import { tokenFingerprint } from "../engine/token-fingerprint.js";

/**
 * The server's `node:diagnostics_channel` channels (names in `SERVER_CHANNELS`), published by the
 * lock service around the engine, which stays free of I/O and of Node modules. Every publisher
 * checks `hasSubscribers` first: with nobody listening a grant costs one property read more.
 */
export const serverChannels = {
  lockGrant: channel(SERVER_CHANNELS.lockGrant),
  leaseLapse: channel(SERVER_CHANNELS.leaseLapse),
};

/** The builders of the server's messages, on one object so a test can count what is built. */
export const serverMessages = {
  lockGrant(namespace: string, requestId: string | undefined, answer: LockAcquiredResponse, waited: boolean): ServerLockGrantMessage {
    const message = { namespace, tokenFingerprint: tokenFingerprint(answer.token), acquired: answer.acquired, waited };
    return requestId === undefined ? message : { ...message, requestId };
  },
  leaseLapse(namespace: string, descriptorCount: number, lapse: LeaseLapse): ServerLeaseLapseMessage {
    // The engine fingerprinted the token already (it names the holder in the lapse log line).
    return { namespace, descriptorCount, tokenFingerprint: lapse.fingerprint };
  },
};
