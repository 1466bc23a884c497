import type { TimestampAnswer } from "./check-timestamp-order.js";
import { postJson, sleep } from "./control-cluster.js";

/** A running set of timestamp loops against one server: stop it to collect. */
export interface TimestampHammer {
  readonly answers: TimestampAnswer[];
  /** Answers by HTTP status (0: connection failure or timeout). */
  readonly statuses: Map<number, number>;
  /** Stop the loops and wait for their calls in flight. */
  stop(): Promise<void>;
}

/**
 * `loops` concurrent loops asking `url` (one server, no routing, no redirects followed) for `count`
 * (default 1) fresh timestamps of `namespace` at a time, with a long per-call timeout, so while the
 * server is stopped each loop's request waits in its socket (kept-alive connections of the
 * process's fetch) and is handled when it resumes. A refusal (503 while the bound is extended, 421
 * once it no longer leads) is retried after 5 ms. `into`: add to an earlier, stopped hammer's answers.
 */
export function startTimestampHammer(url: string, namespace: string, loops: number, via: string, count = 1, into?: TimestampHammer | undefined): TimestampHammer {
  const answers: TimestampAnswer[] = into?.answers ?? [];
  const statuses = into?.statuses ?? new Map<number, number>();
  let stopping = false;
  const loop = async (): Promise<void> => {
    while (!stopping) {
      const sentAt = performance.now();
      let status = 0;
      try {
        const res = await postJson(`${url}/v1/namespaces/${namespace}/timestamps`, { count }, 20_000);
        status = res.status;
        if (status === 200) {
          const answer = res.body as { start: number; count: number };
          answers.push({ namespace, first: answer.start, last: answer.start + answer.count - 1, sentAt, receivedAt: performance.now(), via });
        }
      } catch {
        status = 0;
      }
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (status !== 200) await sleep(5);
    }
  };
  const running = Array.from({ length: loops }, () => loop());
  return {
    answers,
    statuses,
    async stop() {
      stopping = true;
      await Promise.all(running);
    },
  };
}
