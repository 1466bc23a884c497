import { Agent } from "node:http";
import { responseValidators, type LockAcquiredResponse, type LockMode } from "@leasehold/protocol";
import type { ClientLedger } from "./client-ledger.js";
import type { MsRange } from "./fault-proxy.js";
import { rawPost, type RawOutcome } from "./raw-http.js";
import { SeededRandom, deriveSeed } from "../seeded-random.js";
import type { Violations } from "../violations.js";

/** Options of {@link runRawWorkload}. */
export interface RawWorkloadOptions {
  /** The fault proxy's port. */
  readonly port: number;
  readonly namespace: string;
  /** Descriptors to contend on; every request names one. */
  readonly descriptors: readonly string[];
  /** Concurrent loops, each with its own keep-alive agent. */
  readonly loops: number;
  readonly seed: number;
  /** True once the loops should stop starting new requests. */
  readonly stop: () => boolean;
  /** Longest `acquireTimeoutMs` drawn. */
  readonly maxWaitMs: number;
  /** How long past its wait an attempt may go unanswered before it is given up (`timeout`). */
  readonly answerGraceMs: number;
  /** Share of attempts abandoned on purpose (the connection destroyed) at a random time during the wait. */
  readonly abandonRate: number;
  /** Chance of sending the same requestId again after an attempt got no answer (the rest give up). */
  readonly retryRate: number;
  /** Attempts per requestId at most. */
  readonly maxAttempts: number;
  /** Share of grants whose request is sent once more at once, which must answer the same token. */
  readonly resendRate: number;
  /** Share of holds that send `refresh`. */
  readonly refreshRate: number;
  /** Share of requests in shared mode (the rest exclusive). */
  readonly sharedRate: number;
  readonly holdMs: MsRange;
  readonly ledger: ClientLedger;
  readonly violations: Violations;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function outcomeName(out: RawOutcome): string {
  return out.kind === "answer" ? `HTTP ${out.status}` : out.reason;
}

/**
 * Loops of raw HTTP `lock` requests with explicit requestIds through the proxy, with the retries
 * under the test's control: after an attempt that got no answer (reset, truncated, timed out, or
 * abandoned on purpose) the same requestId is usually sent again, up to `maxAttempts`. A grant is
 * sometimes re-sent at once (`resend-within-lease`: answered within the lease, it must carry the
 * same token and fencing tokens), held, maybe refreshed, and unlocked (unlock is idempotent, so it
 * is retried up to 3 times; if all fail the lock lapses). Any answer but 200 is `unexpected-answer`.
 */
export async function runRawWorkload(o: RawWorkloadOptions): Promise<void> {
  const { ledger, violations } = o;
  const path = (op: string): string => `/v1/namespaces/${o.namespace}/${op}`;

  async function send(agent: Agent, kind: string, op: string, body: unknown, timeoutMs: number, abandonAfterMs?: number): Promise<RawOutcome> {
    ledger.op(kind);
    const started = performance.now();
    const out = await rawPost(agent, o.port, path(op), body, { timeoutMs, ...(abandonAfterMs !== undefined && { abandonAfterMs }) });
    ledger.settled(kind, performance.now() - started);
    ledger.outcome(kind, out.kind === "answer" && out.status === 200 ? "200" : outcomeName(out));
    if (out.kind === "answer" && out.status !== 200) {
      violations.add("unexpected-answer", `${op}: HTTP ${out.status} ${JSON.stringify(out.body).slice(0, 200)}`);
    }
    return out;
  }

  async function loop(l: number): Promise<void> {
    const rng = new SeededRandom(deriveSeed(o.seed, 2, l));
    const agent = new Agent({ keepAlive: true, maxSockets: 2 });
    try {
      for (let i = 0; !o.stop(); i++) {
        const requestId = `raw-${l}-${i}`;
        const descriptor = rng.pick(o.descriptors);
        const mode: LockMode = rng.chance(o.sharedRate) ? "shared" : "exclusive";
        const waitMs = rng.int(0, o.maxWaitMs);
        const request = { requestId, locks: [{ descriptor, mode }], acquireTimeoutMs: waitMs };
        let grant: { answer: LockAcquiredResponse; sentAt: number } | undefined;
        for (let attempt = 0; attempt < o.maxAttempts; attempt++) {
          const abandonAfter = rng.chance(o.abandonRate) ? rng.int(0, waitMs) : undefined;
          const sentAt = performance.now();
          const out = await send(agent, attempt === 0 ? "raw-lock" : "raw-lock-retry", "lock", request, waitMs + o.answerGraceMs, abandonAfter);
          if (out.kind === "answer") {
            const body = out.body;
            if (out.status === 200 && !responseValidators.lock.check(body)) {
              violations.add("unexpected-answer", `lock ${requestId}: a 200 that is not a lock answer: ${JSON.stringify(body).slice(0, 200)}`);
            } else if (out.status === 200 && responseValidators.lock.check(body) && body.status === "acquired") {
              grant = { answer: body, sentAt };
              ledger.sawGrant(o.namespace, requestId, body);
            }
            break;
          }
          if (!rng.chance(o.retryRate)) break;
          await sleep(rng.int(0, 50));
        }
        if (grant === undefined) continue;
        const { token, lease } = grant.answer;
        if (rng.chance(o.resendRate)) {
          const out = await send(agent, "raw-lock-resend", "lock", { ...request, acquireTimeoutMs: 0 }, o.answerGraceMs);
          const answeredAt = performance.now();
          if (out.kind === "answer" && out.status === 200 && answeredAt < grant.sentAt + lease.validForMs) {
            const body = out.body;
            const same =
              responseValidators.lock.check(body) &&
              body.status === "acquired" &&
              body.token === token &&
              body.acquired[0]?.fencingToken === grant.answer.acquired[0]?.fencingToken;
            if (same) ledger.outcome("raw-lock-resend", "same token within the lease");
            else violations.add("resend-within-lease", `${requestId}: re-sent within its lease, answered ${JSON.stringify(body).slice(0, 200)}`);
          }
        }
        await sleep(rng.int(o.holdMs.min, o.holdMs.max));
        if (rng.chance(o.refreshRate)) await send(agent, "raw-refresh", "refresh", { tokens: [token] }, o.answerGraceMs);
        for (let attempt = 0; attempt < 3; attempt++) {
          const out = await send(agent, attempt === 0 ? "raw-unlock" : "raw-unlock-retry", "unlock", { tokens: [token] }, o.answerGraceMs);
          if (out.kind === "answer") break;
        }
      }
    } finally {
      agent.destroy();
    }
  }

  await Promise.all(Array.from({ length: o.loops }, (_, l) => loop(l)));
}
