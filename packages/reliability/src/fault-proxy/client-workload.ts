import type { LockClient } from "@leasehold/client";
import type { LockMode } from "@leasehold/protocol";
import type { ClientLedger } from "./client-ledger.js";
import type { MsRange } from "./fault-proxy.js";
import { SeededRandom, deriveSeed } from "../seeded-random.js";
import { settleWithin } from "../settle-within.js";
import type { Violations } from "../violations.js";

/** Options of {@link runClientWorkload}. */
export interface ClientWorkloadOptions {
  /** `LockClient.http` clients, all of one namespace, connected through the fault proxy. */
  readonly clients: readonly LockClient[];
  /** Concurrent loops per client. */
  readonly loopsPerClient: number;
  readonly namespace: string;
  /** Descriptors to contend on; every request names one. */
  readonly descriptors: readonly string[];
  readonly seed: number;
  /** True once the loops should stop starting new iterations. */
  readonly stop: () => boolean;
  /** Longest `acquireTimeoutMs` drawn. */
  readonly maxWaitMs: number;
  /** Share of lock calls given an AbortSignal that aborts at a random time during the wait. */
  readonly abortRate: number;
  /** Share of requests in shared mode (the rest exclusive). */
  readonly sharedRate: number;
  /** How long a granted lock is held before release. */
  readonly holdMs: MsRange;
  /** Share of releases by awaited `unlock` (the rest by `tryUnlock`). */
  readonly unlockRate: number;
  /** Share of lock calls given the test's own requestId; the rest get the client's. */
  readonly ownRequestIdRate: number;
  /** Share of holds that also call `refresh` explicitly. */
  readonly refreshRate: number;
  /** The longest a lock call may take to settle given its wait (see `operationBoundMs`); over it, it hung. */
  readonly lockBoundMs: (waitMs: number) => number;
  /** The longest any other call may take to settle. */
  readonly callBoundMs: number;
  readonly ledger: ClientLedger;
  readonly violations: Violations;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function codeOf(err: unknown): string {
  return typeof err === "object" && err !== null && "code" in err && typeof err.code === "string" ? err.code : "UNKNOWN";
}

/**
 * Run loops of lock (mostly with the test's own requestId, a wait, sometimes an abort), hold, maybe refresh, and
 * unlock or tryUnlock, on LockClients, until `stop()`. Every call is watched: it must settle within
 * its bound (`hung-operation`), fail only with the codes the client documents for an unreachable
 * service (`UNAVAILABLE`) or an abort (`CANCELLED`, only when the signal aborted)
 * (`unexpected-error`), and `tryUnlock` must never throw (`tryUnlock-threw`).
 */
export async function runClientWorkload(o: ClientWorkloadOptions): Promise<void> {
  const { ledger, violations } = o;

  async function loop(client: LockClient, c: number, l: number): Promise<void> {
    const rng = new SeededRandom(deriveSeed(o.seed, 1, c, l));
    for (let i = 0; !o.stop(); i++) {
      // Most calls name their requestId (to correlate with the server's record); the rest leave it
      // to the client, which must then make one up (checked at the end of the run).
      const ownId = rng.chance(o.ownRequestIdRate);
      const requestId = ownId ? `lc-${c}-${l}-${i}` : undefined;
      const descriptor = rng.pick(o.descriptors);
      const mode: LockMode = rng.chance(o.sharedRate) ? "shared" : "exclusive";
      const waitMs = rng.int(0, o.maxWaitMs);
      const controller = rng.chance(o.abortRate) ? new AbortController() : undefined;
      const abortTimer = controller && setTimeout(() => controller.abort(), rng.int(0, waitMs + 200));
      ledger.op("lock");
      const r = await settleWithin(
        client.lock([{ descriptor, mode }], { ...(requestId !== undefined && { requestId }), acquireTimeoutMs: waitMs, ...(controller && { signal: controller.signal }) }),
        o.lockBoundMs(waitMs),
      );
      clearTimeout(abortTimer);
      if (!r.settled) {
        violations.add("hung-operation", `lock ${String(requestId)} (wait ${waitMs} ms) did not settle within ${o.lockBoundMs(waitMs)} ms`);
        continue;
      }
      ledger.settled("lock", r.ms);
      if (!r.ok) {
        const code = codeOf(r.error);
        ledger.outcome("lock", code === "CANCELLED" && controller?.signal.aborted === true ? "CANCELLED (aborted)" : code);
        if (!(code === "UNAVAILABLE" || (code === "CANCELLED" && controller?.signal.aborted === true))) {
          violations.add("unexpected-error", `lock ${String(requestId)}: ${code}: ${String((r.error as Error).message)}`);
        }
        continue;
      }
      ledger.outcome("lock", r.value.status);
      if (r.value.status !== "acquired") continue;
      const token = r.value.token;
      ledger.sawGrant(o.namespace, requestId, r.value);
      // A figure, not a check: under faults a lock call can legitimately outlast its lease.
      if (!client.isHeld(token)) ledger.lapsedOnReturn.push({ token, ms: r.ms });
      await sleep(rng.int(o.holdMs.min, o.holdMs.max));
      if (rng.chance(o.refreshRate)) await call("refresh", () => client.refresh([token]));
      if (rng.chance(o.unlockRate)) {
        await call("unlock", () => client.unlock([token]));
      } else {
        ledger.op("tryUnlock");
        try {
          client.tryUnlock([token]);
          ledger.outcome("tryUnlock", "returned");
        } catch (err) {
          violations.add("tryUnlock-threw", String(err));
        }
      }
    }
  }

  async function call(kind: string, fn: () => Promise<unknown>): Promise<void> {
    ledger.op(kind);
    const r = await settleWithin(fn(), o.callBoundMs);
    if (!r.settled) {
      violations.add("hung-operation", `${kind} did not settle within ${o.callBoundMs} ms`);
      return;
    }
    ledger.settled(kind, r.ms);
    if (r.ok) {
      ledger.outcome(kind, "ok");
      return;
    }
    const code = codeOf(r.error);
    ledger.outcome(kind, code);
    if (code !== "UNAVAILABLE") violations.add("unexpected-error", `${kind}: ${code}: ${String((r.error as Error).message)}`);
  }

  const loops: Promise<void>[] = [];
  o.clients.forEach((client, c) => {
    for (let l = 0; l < o.loopsPerClient; l++) loops.push(loop(client, c, l));
  });
  await Promise.all(loops);
}
