import type { AnyOperation } from "@leasehold/protocol";
import { tokenFingerprint } from "../engine/token-fingerprint.js";

/** Most entries (descriptors, fingerprints) itemised in one trace line; counts are complete. */
const MAX_TRACED = 20;

function arrayField(value: unknown, field: string): unknown[] {
  if (typeof value !== "object" || value === null) return [];
  const list = (value as Record<string, unknown>)[field];
  return Array.isArray(list) ? list : [];
}

function fingerprints(list: unknown[]): string[] {
  return list.slice(0, MAX_TRACED).map((t) => (typeof t === "string" ? tokenFingerprint(t) : "?"));
}

function lockDescriptors(body: unknown): { descriptors: number; locks: unknown[] } {
  const locks = arrayField(body, "locks");
  return {
    descriptors: locks.length,
    locks: locks.slice(0, MAX_TRACED).map((l) => (typeof l === "object" && l !== null ? { descriptor: (l as Record<string, unknown>).descriptor, mode: (l as Record<string, unknown>).mode } : l)),
  };
}

/**
 * What a request carried and got, for the `trace` access log: descriptors and modes, and every
 * token only by its fingerprint (a token is a bearer credential). Built only when trace is on.
 */
export function traceDetail(operation: AnyOperation, body: unknown, answer: unknown): object {
  switch (operation) {
    case "lock": {
      const token = typeof answer === "object" && answer !== null ? (answer as Record<string, unknown>).token : undefined;
      const clientDescription = typeof body === "object" && body !== null ? (body as Record<string, unknown>).clientDescription : undefined;
      return { ...lockDescriptors(body), clientDescription, granted: typeof token === "string" ? tokenFingerprint(token) : null };
    }
    case "lock-batch": {
      const requests = arrayField(body, "requests");
      return { requests: requests.length, entries: requests.slice(0, MAX_TRACED).map(lockDescriptors) };
    }
    case "unlock":
    case "refresh": {
      const tokens = arrayField(body, "tokens");
      const done = arrayField(answer, operation === "unlock" ? "unlocked" : "refreshed");
      return { tokens: tokens.length, fingerprints: fingerprints(tokens), [operation === "unlock" ? "unlocked" : "refreshed"]: done.length };
    }
    case "transactions/start": {
      const started = arrayField(answer, "transactions").map((t) => (typeof t === "object" && t !== null ? (t as Record<string, unknown>).token : undefined));
      return { transactions: started.length, fingerprints: fingerprints(started) };
    }
    default:
      return { body };
  }
}
