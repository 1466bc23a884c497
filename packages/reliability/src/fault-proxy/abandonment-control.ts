import { Agent } from "node:http";
import { LockClient } from "@leasehold/client";
import { startServer, type EmbeddedLockService } from "@leasehold/server";
import { pino } from "pino";
import { checkGrants } from "./check-grants.js";
import { startFaultProxy } from "./fault-proxy.js";
import { rawPost } from "./raw-http.js";
import { tapService } from "./server-tap.js";
import { Violations } from "../violations.js";

/** Options of {@link runAbandonmentControl}. */
export interface AbandonmentControlOptions {
  /** Abandoned waits to stage, one per descriptor. */
  readonly rounds: number;
  /** Break the server before the rounds (the negative control); omitted, the real server is checked. */
  readonly breakServer?: ((service: EmbeddedLockService) => void) | undefined;
}

/** What {@link runAbandonmentControl} found. */
export interface AbandonmentControlResult {
  /** Waits the server saw abandoned (its answer to them rejected `CANCELLED`). */
  readonly abandoned: number;
  /** `grant-to-nobody` violations: abandoned waits granted later to nobody. */
  readonly ghostGrants: number;
  readonly violations: Violations;
}

const NAMESPACE = "abandonment-control";
const LEASE_MS = 1_500;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Stage abandoned waits one at a time and run the same `grant-to-nobody` check as the load run: a
 * direct client holds a descriptor; a raw lock request for it (wait 3 s) goes through the proxy (no
 * faults: a plain relay) and its connection is destroyed after 200 ms; once the server has seen the
 * disconnect, the holder unlocks. A correct server has taken the abandoned wait out of the queue, so
 * nothing is granted; a server that left it queued grants it to nobody, and the fencing-number
 * accounting must notice. Deterministic: the test runs it against the real server (0 expected) and
 * against one broken on purpose (one ghost per round expected).
 */
export async function runAbandonmentControl(options: AbandonmentControlOptions): Promise<AbandonmentControlResult> {
  const server = await startServer({ leaseMs: LEASE_MS });
  options.breakServer?.(server.service);
  const tap = tapService(server.service);
  const proxy = await startFaultProxy({ target: { port: Number(new URL(server.url).port) }, seed: 0 });
  const holder = LockClient.http({ baseUrl: server.url, namespace: NAMESPACE, logger: pino({ level: "silent" }) });
  const agent = new Agent({ keepAlive: true });
  const first = server.service.snapshot(NAMESPACE).nextTimestamp;
  const received = new Set<string>();
  const violations = new Violations();
  try {
    for (let round = 0; round < options.rounds; round++) {
      const locks = [{ descriptor: `c${round}`, mode: "exclusive" as const }];
      const held = await holder.lock(locks);
      if (held.status !== "acquired") throw new Error("abandonment control: the holder could not lock a free descriptor");
      received.add(held.token);
      const requestId = `control-${round}`;
      const body = { requestId, locks, acquireTimeoutMs: 3_000 };
      const out = await rawPost(agent, proxy.port, `/v1/namespaces/${NAMESPACE}/lock`, body, { timeoutMs: 5_000, abandonAfterMs: 200 });
      if (out.kind !== "failed" || out.reason !== "abandoned") throw new Error(`abandonment control: expected an abandoned wait, got ${JSON.stringify(out)}`);
      const seenBy = performance.now() + 2_000;
      while (!tap.calls.some((c) => c.requestId === requestId && c.outcome === "cancelled")) {
        if (performance.now() > seenBy) throw new Error("abandonment control: the server never saw the disconnect");
        await sleep(5);
      }
      await holder.unlock([held.token]);
      await sleep(20);
    }
    const issued = new Map([[NAMESPACE, { first, next: server.service.snapshot(NAMESPACE).nextTimestamp }]]);
    checkGrants({ tap, leaseMs: LEASE_MS, received, issued, violations });
    return {
      abandoned: tap.calls.filter((c) => c.outcome === "cancelled").length,
      ghostGrants: violations.count("grant-to-nobody"),
      violations,
    };
  } finally {
    agent.destroy();
    await holder.close();
    await proxy.close();
    await server.close();
  }
}
