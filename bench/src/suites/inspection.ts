import { LockEngine } from "@leasehold/server";
import type { Figure, Suite } from "../figures.js";
import { nowMs, quantile, round } from "../stats.js";

/** Median milliseconds of `rounds` calls of `fn`. */
function timeMs(rounds: number, fn: (round: number) => void): number {
  const times: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const start = nowMs();
    fn(r);
    times.push(nowMs() - start);
  }
  return quantile(times, 0.5);
}

/**
 * What inspection costs in a namespace with `held` single-descriptor locks (ADR 0006): a page of
 * 100 descriptors from the start and from a cursor in the middle, a prefix-filtered page, a
 * contended-only page (a few waiters), the namespace list, and a revoke by a fingerprint nobody
 * computed before (the worst case: every token hashed once).
 */
function measure(held: number, rounds: number): Record<string, number> {
  const engine = new LockEngine({ leaseMs: 600_000 });
  const batch = 10_000;
  for (let i = 0; i < held; i += batch) {
    const locks = Array.from({ length: Math.min(batch, held - i) }, (_, k) => ({ descriptor: `row-${String(i + k).padStart(8, "0")}`, mode: "exclusive" as const }));
    // One descriptor per token, as a million independent holders would have.
    for (const spec of locks) engine.lock("big", { locks: [spec] });
  }
  for (let w = 0; w < 10; w++) engine.lock("big", { locks: [{ descriptor: `row-${String(w * 1000).padStart(8, "0")}`, mode: "exclusive" }], acquireTimeoutMs: 60_000 });
  const query = { view: "descriptors" as const, contended: false, limit: 100 };
  const mid = `row-${String(Math.floor(held / 2)).padStart(8, "0")}`;
  const out: Record<string, number> = {};
  out.first = timeMs(rounds, () => engine.inspect("big", query));
  out.middle = timeMs(rounds, () => engine.inspect("big", { ...query, cursor: mid }));
  out.prefix = timeMs(rounds, () => engine.inspect("big", { ...query, prefix: "row-0099" }));
  out.contended = timeMs(rounds, () => engine.inspect("big", { ...query, contended: true }));
  out.namespaces = timeMs(rounds, () => engine.inspectNamespaces(undefined, 1000));
  // Revoke by descriptor of one lock, then by fingerprint (never computed: every token is hashed).
  out.revokeDescriptor = timeMs(1, () => engine.revoke("big", { descriptors: ["row-00000001"] }));
  out.revokeFingerprintCold = timeMs(1, () => engine.revoke("big", { fingerprints: ["0000000000000000"] }));
  out.revokeFingerprintWarm = timeMs(1, () => engine.revoke("big", { fingerprints: ["0000000000000000"] }));
  return out;
}

/** Inspection pages and revoke in a namespace of 1,000,000 held locks. */
export const inspectionSuite: Suite = {
  name: "inspection",
  description: "inspection page, namespace list and revoke costs with 1,000,000 locks held",
  async run(ctx) {
    const held = ctx.quick ? 200_000 : 1_000_000;
    const m = measure(held, ctx.quick ? 3 : 7);
    ctx.progress(`inspection at ${held} held: ${JSON.stringify(Object.fromEntries(Object.entries(m).map(([k, v]) => [k, round(v, 1)])))}`);
    const figure = (name: string, value: number, note: string): Figure => ({ name, value: round(value, 1), unit: "ms", command: ctx.command, quick: ctx.quick, note });
    const n = held.toLocaleString("en-US");
    return [
      figure("inspect_page_ms_1m_held", m.first!, `GET …/locks?limit=100 from the start, ${n} exclusive locks held (median)`),
      figure("inspect_page_ms_1m_held_cursor", m.middle!, `the same from a cursor in the middle`),
      figure("inspect_page_ms_1m_held_prefix", m.prefix!, `the same with a prefix matching 100 descriptors`),
      figure("inspect_page_ms_1m_held_contended", m.contended!, `contended=true with 10 waiters among ${n} held`),
      figure("inspect_namespaces_ms_1m_held", m.namespaces!, `GET /v1/namespaces with one namespace of ${n} locks`),
      figure("revoke_descriptor_ms_1m_held", m.revokeDescriptor!, `revoke one descriptor among ${n} held`),
      figure("revoke_fingerprint_ms_1m_held_cold", m.revokeFingerprintCold!, `revoke by a fingerprint when none was computed yet: hashes every token once`),
      figure("revoke_fingerprint_ms_1m_held_warm", m.revokeFingerprintWarm!, `the same once every fingerprint is cached`),
    ];
  },
};
