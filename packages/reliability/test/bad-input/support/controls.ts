import fc from "fast-check";
import { expect } from "vitest";
import type { RunningServer } from "@leasehold/server";
import { stringOfBytes } from "./arbitraries/unicode-cases.js";
import { PROTOTYPE_KEYS } from "./arbitraries/schema-cases.js";
import type { Tally } from "./tally.js";

interface Acquired {
  readonly status: string;
  readonly token: string;
  readonly acquired: readonly { readonly descriptor: string }[];
}

async function post(server: RunningServer, namespace: string, op: string, body: string): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${server.url}/v1/namespaces/${namespace}/${op}`, { method: "POST", headers: { "content-type": "application/json" }, body });
  return { status: res.status, json: (await res.json()) as unknown };
}

const TRICKY = ["\ufffe", "\uffff", "\ufdd0", "\u{10ffff}", "😀", "👩‍👩‍👧", "e\u0301", "\u0301", "\u0000", "\u202e", "\ufeff", "日本"];

/** Descriptors the protocol accepts although they look dangerous: 1,024-byte, non-characters, NUL, prototype names. */
const acceptedDescriptor: fc.Arbitrary<string> = fc.oneof(
  fc.array(fc.nat(), { minLength: 1, maxLength: 8 }).map((seed) => stringOfBytes(1024, seed)),
  fc.array(fc.constantFrom(...TRICKY), { minLength: 1, maxLength: 6 }).map((parts) => parts.join("")),
  fc.constantFrom(...PROTOTYPE_KEYS),
);

/**
 * Accepted-input controls, so the bad-input oracle is not vacuous: descriptors of exactly 1,024
 * UTF-8 bytes, non-characters, emoji, combining marks, NUL and prototype names are granted and come
 * back byte for byte; `requestId`s named after prototype keys work; number texts that denote an
 * accepted integer (`1.0`, `1E2`, `-0`) are served as that integer. Everything taken is released.
 */
export async function runControls(server: RunningServer, tally: Tally, numRuns: number): Promise<void> {
  const namespace = "controls";
  await fc.assert(
    fc.asyncProperty(acceptedDescriptor, fc.option(fc.constantFrom(...PROTOTYPE_KEYS), { nil: undefined }), async (descriptor, requestId) => {
      tally.controls++;
      const body = JSON.stringify({ locks: [{ descriptor, mode: "exclusive" }], ...(requestId === undefined ? {} : { requestId }) });
      const lock = await post(server, namespace, "lock", body);
      expect(lock.status, JSON.stringify(lock.json)).toBe(200);
      const answer = lock.json as Acquired;
      expect(answer.status).toBe("acquired");
      expect(answer.acquired[0]?.descriptor).toBe(descriptor);
      expect(server.service.snapshot(namespace).descriptors.map((d) => d.descriptor)).toEqual([descriptor]);
      const unlock = await post(server, namespace, "unlock", JSON.stringify({ tokens: [answer.token] }));
      expect(unlock.json).toEqual({ unlocked: [answer.token] });
      expect(server.service.snapshot(namespace).heldTokens).toBe(0);
    }),
    { numRuns },
  );
  for (const [text, count] of [["1.0", 1], ["1E2", 100], ["1e0", 1], ["100e-2", 1], ["10000.0", 10_000]] as const) {
    tally.controls++;
    const res = await post(server, namespace, "timestamps", `{"count":${text}}`);
    expect(res.status).toBe(200);
    expect((res.json as { count: number }).count).toBe(count);
  }
  tally.controls++;
  const negativeZero = await post(server, namespace, "lock", '{"locks":[{"descriptor":"z","mode":"shared"}],"acquireTimeoutMs":-0}');
  expect((negativeZero.json as Acquired).status).toBe("acquired");
  await post(server, namespace, "unlock", JSON.stringify({ tokens: [(negativeZero.json as Acquired).token] }));
  expect(server.service.snapshot(namespace).heldTokens).toBe(0);
}
