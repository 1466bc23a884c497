import { describe, expect, it } from "vitest";
import { SimCaller, type SimCall } from "../src/sim-caller.js";
import type { SimServers, SimService } from "../src/sim-client.js";
import { SimRandom } from "../src/sim-random.js";
import { Scheduler } from "../src/scheduler.js";

/** A caller whose waiting sends the test makes itself. */
class Probe extends SimCaller {
  lock(waitMs: number): Promise<string | null> {
    return this.routedWait("ns", "lock", { sentAt: this.scheduler.now, waitMs }, (wait) => (s: SimService) => s.beginLock("ns", { requestId: "r1", acquireTimeoutMs: wait }) as unknown as string);
  }
}

/**
 * One server whose answers to the first `lose` sends are lost (the client sees a reset
 * `lostAfterMs` after the send), and which answers each later send at once; it notes the wait each
 * send asked for, and when.
 */
function server(scheduler: Scheduler, lose: number, lostAfterMs: number): SimServers & { readonly sends: { at: number; wait: number }[] } {
  const sends: { at: number; wait: number }[] = [];
  return {
    sends,
    urls: () => ["s0"],
    call<T>(_client: string, _url: string, _label: string, call: SimCall<T>): Promise<T> {
      const service = {
        beginLock: (_ns: string, request: { acquireTimeoutMs: number }) => {
          sends.push({ at: scheduler.now, wait: request.acquireTimeoutMs });
          return "answered";
        },
      } as unknown as SimService;
      const answer = (call as (s: SimService) => T)(service);
      if (sends.length > lose) return Promise.resolve(answer);
      return new Promise((_resolve, reject) => scheduler.after(lostAfterMs, "network", "lost answer", () => reject(new Error("simulated connection reset before the answer arrived"))));
    },
  };
}

describe("a simulated client's waiting request", () => {
  it("re-sends after a lost answer asking to wait only what is left of its own wait, as the real client does", async () => {
    const scheduler = new Scheduler();
    // The first send's answer comes (and is lost) as its whole wait ends, as seed 47296's did.
    const servers = server(scheduler, 1, 3_100);
    const probe = new Probe("c0", scheduler, servers, new SimRandom(7));
    const answer = probe.lock(3_000);
    await scheduler.runUntil(10_000);
    expect(await answer).toBe("answered");
    expect(servers.sends[0]).toEqual({ at: 0, wait: 3_000 });
    // The re-send comes once the wait is over: it asks for none (the server answers it at once).
    expect(servers.sends).toHaveLength(2);
    expect(servers.sends[1]!.at).toBeGreaterThan(3_000);
    expect(servers.sends[1]!.wait).toBe(0);
  });

  it("keeps re-sending a request whose answers are lost until a grace after its wait ends, each asking for what is left", async () => {
    const scheduler = new Scheduler();
    const servers = server(scheduler, 3, 400);
    const probe = new Probe("c0", scheduler, servers, new SimRandom(11));
    const answer = probe.lock(1_000);
    await scheduler.runUntil(10_000);
    expect(await answer).toBe("answered");
    expect(servers.sends).toHaveLength(4);
    for (const { at, wait } of servers.sends) expect(wait).toBe(Math.max(0, Math.ceil(1_000 - at)));
    expect(servers.sends[3]!.wait).toBe(0);
  });
});
