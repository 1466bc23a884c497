import type { AcquiredLock, LockResponse, RefreshResponse, UnlockResponse } from "@leasehold/protocol";
import type { EmbeddedLockService } from "@leasehold/server";

/**
 * What the server answered about one token, with bounds on when things happened on the server's
 * clock. Every time is `performance.now()` in the server's own process (the engine's default
 * clock), taken just before ("Before", a lower bound) or just after ("After", an upper bound) the
 * synchronous engine call it brackets.
 */
export interface TokenRecord {
  readonly namespace: string;
  readonly token: string;
  /** The `requestId` of the lock request that was granted it. */
  readonly requestId: string | undefined;
  /** The locks and fencing tokens of its first answer. */
  readonly acquired: readonly AcquiredLock[];
  /** Upper bound of the grant: when its first answer was recorded. */
  readonly grantedBy: number;
  /** Latest lower bound of a renewal (the grant, a retry answered it, a refresh returned it). */
  maxRenewBefore: number;
  /** Latest upper bound of a renewal. */
  maxRenewAfter: number;
  /** Answers of `lock` that carried it (1 + retries answered while it was held). */
  answers: number;
  /** Refresh answers that returned it. */
  refreshes: number;
  /** Lower bound of its release by unlock (or lock-cancel), if it was released that way. */
  unlockBefore: number | undefined;
  /** Upper bound of that release. */
  unlockAfter: number | undefined;
  /** Later answers for it that differ from the first (other fencing tokens or requestId): must stay empty. */
  readonly inconsistencies: string[];
}

/**
 * One call of `beginLock` (every HTTP `lock`, a retry included, and every `lock-batch` entry, which
 * the service runs through `beginLock` too) and how the server answered it.
 */
export interface LockCallRecord {
  readonly namespace: string;
  readonly requestId: string | undefined;
  /** Lower bound of when the engine saw it. */
  readonly begin: number;
  /** When the answer was known (upper bound), once it is. */
  end: number | undefined;
  /** True when the request had to wait (the answer came later). */
  readonly waited: boolean;
  outcome: "pending" | "acquired" | "timeout" | "cancelled" | "error";
  token: string | undefined;
  errorCode: string | undefined;
}

/** The recording a {@link tapService} call keeps, and the original methods for unrecorded probes. */
export interface ServerTap {
  /** Every token the server answered, by token. */
  readonly tokens: Map<string, TokenRecord>;
  /** Every lock call, in arrival order. */
  readonly calls: LockCallRecord[];
  /** The token whose grant carried this fencing token, per namespace. */
  byFence(namespace: string, fencingToken: number): TokenRecord | undefined;
  /** Every token granted for this requestId, in answer order. */
  byRequestId(namespace: string, requestId: string): readonly TokenRecord[];
  /** Refresh and unlock calls seen. */
  readonly counts: { refreshCalls: number; unlockCalls: number; cancelCalls: number };
  /** The untapped `refresh`, for probes that must not count as client traffic. */
  readonly originalRefresh: EmbeddedLockService["refresh"];
}

function fields(request: unknown): { requestId: string | undefined } {
  if (typeof request !== "object" || request === null) return { requestId: undefined };
  const id = (request as { requestId?: unknown }).requestId;
  return { requestId: typeof id === "string" ? id : undefined };
}

function codeOf(err: unknown): string {
  return typeof err === "object" && err !== null && "code" in err && typeof err.code === "string" ? err.code : "UNKNOWN";
}

function sameAcquired(a: readonly AcquiredLock[], b: readonly AcquiredLock[]): boolean {
  return a.length === b.length && a.every((x, i) => x.descriptor === b[i]?.descriptor && x.mode === b[i]?.mode && x.fencingToken === b[i]?.fencingToken);
}

/**
 * Record what a running server's lock service answers, by wrapping the public methods its HTTP
 * handler calls (`beginLock`, `unlock`, `refresh`, `cancelLock`) on the service object itself. The
 * wrappers pass every call and answer through unchanged; they only note, on the server's clock,
 * which tokens were granted to which `requestId`, when they were renewed and when released. This
 * is the true server-side view that the checks compare the clients' view with (the snapshot has no
 * tokens and no request ids). Install it before any traffic.
 */
export function tapService(service: EmbeddedLockService, now: () => number = () => performance.now()): ServerTap {
  const tokens = new Map<string, TokenRecord>();
  const fences = new Map<string, TokenRecord>();
  const byRequest = new Map<string, TokenRecord[]>();
  const calls: LockCallRecord[] = [];
  const counts = { refreshCalls: 0, unlockCalls: 0, cancelCalls: 0 };

  const beginLock = service.beginLock.bind(service);
  const unlock = service.unlock.bind(service);
  const refresh = service.refresh.bind(service);
  const cancelLock = service.cancelLock.bind(service);

  function renew(rec: TokenRecord, before: number, after: number): void {
    rec.maxRenewBefore = Math.max(rec.maxRenewBefore, before);
    rec.maxRenewAfter = Math.max(rec.maxRenewAfter, after);
  }

  function released(rec: TokenRecord, before: number, after: number): void {
    rec.unlockBefore = Math.min(rec.unlockBefore ?? Infinity, before);
    rec.unlockAfter = Math.min(rec.unlockAfter ?? Infinity, after);
  }

  function answered(call: LockCallRecord, answer: LockResponse, after: number): void {
    call.end = after;
    if (answer.status !== "acquired") {
      call.outcome = "timeout";
      return;
    }
    call.outcome = "acquired";
    call.token = answer.token;
    const known = tokens.get(answer.token);
    if (known !== undefined) {
      known.answers++;
      renew(known, call.begin, after);
      if (known.requestId !== call.requestId || !sameAcquired(known.acquired, answer.acquired)) {
        known.inconsistencies.push(`answered again with requestId ${String(call.requestId)} and ${JSON.stringify(answer.acquired)}`);
      }
      return;
    }
    const rec: TokenRecord = {
      namespace: call.namespace,
      token: answer.token,
      requestId: call.requestId,
      acquired: answer.acquired.map((a) => ({ ...a })),
      grantedBy: after,
      maxRenewBefore: call.begin,
      maxRenewAfter: after,
      answers: 1,
      refreshes: 0,
      unlockBefore: undefined,
      unlockAfter: undefined,
      inconsistencies: [],
    };
    tokens.set(rec.token, rec);
    for (const a of rec.acquired) fences.set(`${rec.namespace}\u0000${a.fencingToken}`, rec);
    if (rec.requestId !== undefined) {
      const key = `${rec.namespace}\u0000${rec.requestId}`;
      const list = byRequest.get(key);
      if (list === undefined) byRequest.set(key, [rec]);
      else list.push(rec);
    }
  }

  service.beginLock = (namespace, request) => {
    const begin = now();
    let result: ReturnType<typeof beginLock>;
    try {
      result = beginLock(namespace, request);
    } catch (err) {
      calls.push({ namespace, ...fields(request), begin, end: now(), waited: false, outcome: "error", token: undefined, errorCode: codeOf(err) });
      throw err;
    }
    const after = now();
    const waited = "abandon" in result;
    const call: LockCallRecord = { namespace, ...fields(request), begin, end: undefined, waited, outcome: "pending", token: undefined, errorCode: undefined };
    calls.push(call);
    if (!("abandon" in result)) {
      answered(call, result, after);
      return result;
    }
    result.answer.then(
      (answer) => answered(call, answer, now()),
      (err: unknown) => {
        call.end = now();
        call.errorCode = codeOf(err);
        call.outcome = call.errorCode === "CANCELLED" ? "cancelled" : "error";
      },
    );
    return result;
  };

  service.unlock = (namespace, request, options) => {
    counts.unlockCalls++;
    const before = now();
    const pending = unlock(namespace, request, options);
    const after = now();
    return pending.then((answer: UnlockResponse) => {
      for (const t of answer.unlocked) {
        const rec = tokens.get(t);
        if (rec !== undefined) released(rec, before, after);
      }
      return answer;
    });
  };

  service.refresh = (namespace, request, options) => {
    counts.refreshCalls++;
    const before = now();
    const pending = refresh(namespace, request, options);
    const after = now();
    return pending.then((answer: RefreshResponse) => {
      for (const t of answer.refreshed) {
        const rec = tokens.get(t);
        if (rec === undefined) continue;
        rec.refreshes++;
        renew(rec, before, after);
      }
      return answer;
    });
  };

  service.cancelLock = (namespace, request, options) => {
    counts.cancelCalls++;
    const before = now();
    const pending = cancelLock(namespace, request, options);
    const after = now();
    return pending.then((answer) => {
      const { requestId } = fields(request);
      if (answer.cancelled && requestId !== undefined) {
        // A held request is released by the cancel; a waiting one has no token, and then its
        // requestId's latest token had already ended, so marking it here cannot move its end later.
        const list = byRequest.get(`${namespace}\u0000${requestId}`);
        const latest = list?.[list.length - 1];
        if (latest !== undefined) released(latest, before, after);
      }
      return answer;
    });
  };

  return {
    tokens,
    calls,
    byFence: (namespace, fencingToken) => fences.get(`${namespace}\u0000${fencingToken}`),
    byRequestId: (namespace, requestId) => byRequest.get(`${namespace}\u0000${requestId}`) ?? [],
    counts,
    originalRefresh: refresh,
  };
}
