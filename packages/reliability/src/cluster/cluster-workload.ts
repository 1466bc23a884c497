import { LockClient } from "@leasehold/client";
import { pino } from "pino";
import { FencedCounter } from "../fenced-resource/index.js";
import { HistoryRecorder } from "../history/index.js";
import { SeededRandom, deriveSeed } from "../seeded-random.js";
import { settleWithin } from "../settle-within.js";
import type { Violations } from "../violations.js";
import type { TimestampAnswer } from "./check-timestamp-order.js";
import { sleep } from "./control-cluster.js";

/** How the clients of the cluster fault suite work. */
export interface ClusterWorkloadOptions {
  readonly baseUrls: readonly string[];
  readonly namespaces: readonly string[];
  /** Clients per namespace (each with one lock loop and one timestamp/transaction loop). */
  readonly clientsPerNamespace: number;
  /** Descriptors per namespace the lock loops contend for. */
  readonly descriptors: number;
  /** Each call's own deadline (`acquireTimeoutMs` of locks, an abort signal for the rest). */
  readonly deadlineMs: number;
  /**
   * The clients' `requestTimeoutMs`: how long one exchange may wait for an answer beyond the call's
   * own wait (a lock to a leader that is paused waits its remaining deadline plus this before it is
   * re-sent elsewhere), so a call may legitimately settle this much after its deadline.
   */
  readonly requestTimeoutMs: number;
  /** How much later than its deadline a call may settle before it counts as hung (give `requestTimeoutMs` plus scheduling slack). */
  readonly settleBoundMs: number;
  /** Longest time a holder keeps a lock (drawn uniformly from 10 ms to this). */
  readonly holdMaxMs: number;
  readonly seed: number;
  /**
   * Pause after each call of every loop (ms). Default 0: as fast as the servers answer (a load
   * test). A light load (issue 29's repeated crash) paces its calls instead.
   */
  readonly paceMs?: number | undefined;
}

/** What the clients did, for the checks and the report. */
export interface ClusterWorkloadTally {
  calls: number;
  grants: number;
  lockTimeouts: number;
  /** Calls that failed (503 after retries, deadline passed, connection failures): allowed during faults. */
  errors: number;
  /** Locks the clients reported lost, by reason. */
  lostLocks: Record<string, number>;
  transactions: number;
  /** Settled calls' latency beyond their deadline, the worst (ms). */
  worstOverDeadlineMs: number;
}

/** A running workload: stop it and collect. */
export interface ClusterWorkload {
  readonly recorder: HistoryRecorder;
  readonly timestamps: TimestampAnswer[];
  readonly tally: ClusterWorkloadTally;
  readonly counters: Map<string, FencedCounter>;
  /** Stop every loop, close every client. */
  stop(): Promise<void>;
}

/**
 * Start clients (`LockClient.http({ baseUrls })`, so every call is routed, follows 421 and retries
 * 503 and connection failures within its deadline) that take exclusive locks and use fenced
 * counters, ask for timestamps and start transactions, until stopped. Every call is watched with
 * {@link settleWithin}: one not settled within its deadline plus `settleBoundMs` is a violation.
 */
export function startClusterWorkload(options: ClusterWorkloadOptions, violations: Violations): ClusterWorkload {
  const recorder = new HistoryRecorder();
  const timestamps: TimestampAnswer[] = [];
  const tally: ClusterWorkloadTally = { calls: 0, grants: 0, lockTimeouts: 0, errors: 0, lostLocks: {}, transactions: 0, worstOverDeadlineMs: 0 };
  const counters = new Map<string, FencedCounter>();
  const logger = pino({ level: "silent" });
  const clients: LockClient[] = [];
  let stopping = false;
  let holders = 0;
  const pace = options.paceMs ?? 0;

  const watch = async <T>(what: string, call: Promise<T>): Promise<T | undefined> => {
    tally.calls++;
    const settled = await settleWithin(call, options.deadlineMs + options.settleBoundMs);
    if (!settled.settled) {
      violations.add("calls settle within deadline + bound", `${what} not settled after ${settled.ms.toFixed(0)} ms (deadline ${options.deadlineMs} ms)`);
      return undefined;
    }
    tally.worstOverDeadlineMs = Math.max(tally.worstOverDeadlineMs, settled.ms - options.deadlineMs);
    if (!settled.ok) {
      tally.errors++;
      return undefined;
    }
    return settled.value;
  };

  const lockLoop = async (client: LockClient, namespace: string, rng: SeededRandom): Promise<void> => {
    while (!stopping) {
      const d = `d${rng.int(0, options.descriptors - 1)}`;
      const key = `${namespace}/${d}`;
      let counter = counters.get(key);
      if (counter === undefined) counters.set(key, (counter = new FencedCounter(key, recorder)));
      const requestSentAt = recorder.now();
      const answer = await watch(`lock ${key}`, client.lock([{ descriptor: d, mode: "exclusive" }], { acquireTimeoutMs: options.deadlineMs }));
      const grantReceivedAt = recorder.now();
      if (answer === undefined) {
        await sleep(5);
        continue;
      }
      if (answer.status === "timeout") {
        tally.lockTimeouts++;
        continue;
      }
      const fencingToken = answer.acquired[0]?.fencingToken;
      if (fencingToken === undefined) throw new Error(`grant without a fencing token for ${key}`);
      tally.grants++;
      const holder = `h${holders++}`;
      recorder.grant({ holder, descriptor: key, mode: "exclusive", fencingToken, requestSentAt, grantReceivedAt, guaranteeEndsAt: requestSentAt + answer.lease.validForMs });
      const access = { holder, fencingToken, mode: "exclusive" as const };
      const read = counter.read(access);
      await sleep(rng.int(10, options.holdMaxMs));
      if (read.accepted) counter.write(access, read.value + 1);
      recorder.release(holder);
      client.tryUnlock([answer.token]);
      if (pace > 0) await sleep(pace);
    }
  };

  const timestampLoop = async (client: LockClient, namespace: string, rng: SeededRandom): Promise<void> => {
    while (!stopping) {
      const signal = AbortSignal.timeout(options.deadlineMs);
      const sentAt = performance.now();
      if (rng.chance(0.7)) {
        const count = rng.int(1, 20);
        const answer = await watch(`timestamps ${namespace}`, client.freshTimestamps(count, { signal }));
        if (answer !== undefined) timestamps.push({ namespace, first: answer.start, last: answer.start + answer.count - 1, sentAt, receivedAt: performance.now(), via: "timestamps" });
      } else {
        const txn = await watch(`transactions/start ${namespace}`, client.startTransaction({ signal }));
        if (txn !== undefined) {
          tally.transactions++;
          timestamps.push({ namespace, first: txn.startTimestamp, last: txn.startTimestamp, sentAt, receivedAt: performance.now(), via: "transaction start" });
          client.tryUnlock([txn.token]);
        }
      }
      if (pace > 0) await sleep(pace);
      else if (timestamps.length % 8 === 0) await sleep(rng.int(1, 10));
    }
  };

  const loops: Promise<void>[] = [];
  options.namespaces.forEach((namespace, n) => {
    for (let c = 0; c < options.clientsPerNamespace; c++) {
      const client = LockClient.http({ baseUrls: [...options.baseUrls], namespace, logger, requestTimeoutMs: options.requestTimeoutMs });
      client.lostLocks.subscribe((lost) => (tally.lostLocks[lost.reason] = (tally.lostLocks[lost.reason] ?? 0) + 1));
      clients.push(client);
      loops.push(lockLoop(client, namespace, new SeededRandom(deriveSeed(options.seed, n, c, 0))));
      loops.push(timestampLoop(client, namespace, new SeededRandom(deriveSeed(options.seed, n, c, 1))));
    }
  });
  return {
    recorder,
    timestamps,
    tally,
    counters,
    async stop() {
      stopping = true;
      await Promise.all(loops);
      await Promise.all(clients.map((c) => c.close()));
    },
  };
}
