import { LeaseholdError } from "@leasehold/protocol";
import { describe, expect, it } from "vitest";
import type { TimestampReserver } from "../../src/timestamps/timestamp-reserver.js";
import { makeEngine, req, tokenOf, x } from "./engine-fixture.js";

/**
 * Found by pnpm sim with a reservation block of 2: a cluster leader's reserver answers 503 while
 * the bound's extension is under way, and a lease lapsing on a timer handed the lock to a waiter
 * whose fencing token needed that extension. The error escaped from the timer (an uncaught
 * exception: the process dies). The waiter must instead stay first in line and be granted once
 * the bound is there.
 */
describe("a waiter whose fencing token needs a bound extension still under way", () => {
  function setup() {
    let extending = false;
    const reserver: TimestampReserver = {
      floor: () => 0,
      reserve: (ns, upTo) => {
        if (extending) throw new LeaseholdError("UNAVAILABLE", `the timestamp bound of namespace ${ns} is being extended; retry shortly`);
        // No headroom: every number needs the reserver (a block of 2, as the simulator runs it).
        return upTo;
      },
      persist: () => undefined,
    };
    const t = makeEngine({ reserver });
    return { t, extend: (on: boolean) => (extending = on) };
  }

  it("is not granted by a lapse while the extension runs, and the lapse does not throw; it is granted at the next catch-up once the bound is there", () => {
    const { t, extend } = setup();
    tokenOf(t.engine.lock("ns", req([x("a")])));
    const waiter = t.engine.lock("ns", req([x("a")], { acquireTimeoutMs: 10_000 }));
    expect(waiter.status).toBe("waiting");
    // A timestamp uses the headroom the waiter's arrival reserved (one counter per namespace).
    t.engine.timestamps("ns", { count: 1 });
    extend(true);
    // The holder's lease (1 s) lapses on the engine's timer.
    expect(() => t.tick(1_500)).not.toThrow();
    expect(t.outcome(waiter)).toBeUndefined();
    // A new request meanwhile is refused with a 503 (the client re-sends), as before.
    expect(() => t.engine.lock("ns", req([x("a")], { acquireTimeoutMs: 10_000 }))).toThrow("being extended");
    extend(false);
    // The next catch-up (any request, or the engine's timer) grants the waiter, still first in line.
    const later = t.engine.lock("ns", req([x("a")], { acquireTimeoutMs: 10_000 }));
    expect(tokenOf(t.outcome(waiter))).toBeTruthy();
    expect(later.status).toBe("waiting");
  });
});
