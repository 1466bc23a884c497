import { randomUUID } from "node:crypto";
import {
  LeaseholdError,
  type CallOptions,
  type HealthResponse,
  type ImmutableTimestampResponse,
  type LockRequest,
  type LockResponse,
  type LockService,
  type RefreshRequest,
  type RefreshResponse,
  type StartTransactionsRequest,
  type StartTransactionsResponse,
  type TimestampsRequest,
  type TimestampsResponse,
  type UnlockRequest,
  type UnlockResponse,
} from "@leasehold/protocol";

/** How a scripted operation behaves: answer, fail with UNAVAILABLE, or never answer. */
export type Behavior = "ok" | "fail" | "hang";

/**
 * A scriptable in-memory LockService for client tests: exclusive-only lock table, requestId
 * dedupe, leases without reaping, and knobs to make calls fail, hang or take time. It records
 * every call so properties about what the client sent can be checked.
 */
export class FakeLockService implements LockService {
  leaderId: string = randomUUID();
  validForMs = 5_000;
  unlockBehavior: Behavior = "ok";
  refreshBehavior: Behavior = "ok";
  /** Extra latency of every unlock call, in ms (random up to this). */
  unlockDelayMs = 0;
  readonly held = new Map<string, string[]>(); // token → descriptors
  readonly owner = new Map<string, string>(); // descriptor → token
  readonly byRequestId = new Map<string, string>();
  readonly unlockCalls: string[][] = [];
  readonly refreshCalls: string[][] = [];
  readonly unlockedTokens: string[] = [];
  timestampCalls: number[] = [];
  transactionCalls: number[] = [];
  lockCalls = 0;
  unlockInFlight = 0;
  maxUnlockInFlight = 0;
  #next = 1;
  #hangs: (() => void)[] = [];

  /** Let every hanging call end (with UNAVAILABLE). */
  releaseHangs(): void {
    for (const end of this.#hangs.splice(0)) end();
  }

  /** Forget every token, as a restarted server would, with a new leaderId. */
  restart(): void {
    this.held.clear();
    this.owner.clear();
    this.byRequestId.clear();
    this.leaderId = randomUUID();
  }

  async lock(_ns: string, request: LockRequest, options?: CallOptions): Promise<LockResponse> {
    this.lockCalls++;
    const deadline = Date.now() + (request.acquireTimeoutMs ?? 0);
    for (;;) {
      if (options?.signal?.aborted) throw new LeaseholdError("CANCELLED", "aborted");
      const existing = request.requestId === undefined ? undefined : this.byRequestId.get(request.requestId);
      if (existing !== undefined && this.held.has(existing)) return this.#acquired(existing);
      const descriptors = request.locks.map((l) => l.descriptor);
      if (descriptors.every((d) => !this.owner.has(d))) {
        const token = randomUUID();
        this.held.set(token, descriptors);
        for (const d of descriptors) this.owner.set(d, token);
        if (request.requestId !== undefined) this.byRequestId.set(request.requestId, token);
        return this.#acquired(token);
      }
      if (Date.now() >= deadline) return { status: "timeout" };
      await new Promise((r) => setTimeout(r, 2));
    }
  }

  #acquired(token: string): LockResponse {
    const descriptors = this.held.get(token) ?? [];
    return {
      status: "acquired",
      token,
      lease: { leaderId: this.leaderId, validForMs: this.validForMs },
      acquired: descriptors.map((descriptor) => ({ descriptor, mode: "exclusive" as const, fencingToken: this.#next++ })),
    };
  }

  async unlock(_ns: string, request: UnlockRequest): Promise<UnlockResponse> {
    this.unlockCalls.push([...request.tokens]);
    this.unlockInFlight++;
    this.maxUnlockInFlight = Math.max(this.maxUnlockInFlight, this.unlockInFlight);
    try {
      if (this.unlockDelayMs > 0) await new Promise((r) => setTimeout(r, Math.random() * this.unlockDelayMs));
      await this.#behave(this.unlockBehavior);
      const unlocked: string[] = [];
      for (const token of request.tokens) {
        this.unlockedTokens.push(token);
        const descriptors = this.held.get(token);
        if (descriptors === undefined) continue;
        this.held.delete(token);
        for (const d of descriptors) this.owner.delete(d);
        unlocked.push(token);
      }
      return { unlocked };
    } finally {
      this.unlockInFlight--;
    }
  }

  async refresh(_ns: string, request: RefreshRequest): Promise<RefreshResponse> {
    this.refreshCalls.push([...request.tokens]);
    await this.#behave(this.refreshBehavior);
    return {
      refreshed: request.tokens.filter((t) => this.held.has(t)),
      lease: { leaderId: this.leaderId, validForMs: this.validForMs },
    };
  }

  async timestamps(_ns: string, request: TimestampsRequest): Promise<TimestampsResponse> {
    this.timestampCalls.push(request.count);
    await new Promise((r) => setTimeout(r, 1));
    const start = this.#next;
    this.#next += request.count;
    return { start, count: request.count };
  }

  async startTransactions(_ns: string, request: StartTransactionsRequest): Promise<StartTransactionsResponse> {
    this.transactionCalls.push(request.count);
    await new Promise((r) => setTimeout(r, 1));
    const transactions = Array.from({ length: request.count }, () => {
      const token = randomUUID();
      this.held.set(token, []);
      return { startTimestamp: this.#next++, token };
    });
    return {
      immutableTimestamp: transactions[0]?.startTimestamp ?? 1,
      transactions,
      lease: { leaderId: this.leaderId, validForMs: this.validForMs },
    };
  }

  async immutableTimestamp(): Promise<ImmutableTimestampResponse> {
    return { immutableTimestamp: this.#next++ };
  }

  async health(): Promise<HealthResponse> {
    return { status: "ok", leaderId: this.leaderId, version: "fake" };
  }

  async #behave(behavior: Behavior): Promise<void> {
    if (behavior === "fail") throw new LeaseholdError("UNAVAILABLE", "scripted failure");
    if (behavior === "hang") {
      await new Promise<void>((resolve) => this.#hangs.push(resolve));
      throw new LeaseholdError("UNAVAILABLE", "scripted hang ended");
    }
  }
}
