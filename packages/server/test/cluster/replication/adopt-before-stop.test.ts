import { describe, expect, it } from "vitest";
import type { ShardLease } from "../../../src/cluster/coordinator.js";
import { adoptBeforeStop, type AdoptBeforeStopHost } from "../../../src/cluster/replication/adopt-before-stop.js";
import type { PromotionCandidate } from "../../../src/cluster/replication/promote-replica.js";

/** A row of `shard` at `epoch`, held by `holder` (incarnation `<holder>-1`). */
function row(shard: number, epoch: number, holder: string, expired = false): ShardLease {
  return { shard, holder, url: `http://${holder}`, leaderId: `L${shard}`, incarnation: `${holder}-1`, epoch, version: 1, expired, transitions: epoch, standbyId: null, standbyIncarnation: null, inSync: false };
}

/** Member "me" (incarnation me-1) leading `led` (shard → epoch), with a replica for every shard in `replicas`; adoptions recorded in `adopted`. */
function host(rows: ShardLease[], led: Map<number, number>, replicas: number[], adopted: string[], busy = new Set<number>()): AdoptBeforeStopHost {
  let t = 0;
  const timers: { at: number; fn: () => void }[] = [];
  return {
    serverId: "me",
    incarnation: "me-1",
    readLeases: async () => rows,
    ledEpoch: (shard) => led.get(shard) ?? null,
    forHandOver: (r) => (replicas.includes(r.shard) ? ({ shard: r.shard, epoch: r.epoch - 1, leaderId: r.leaderId } as unknown as PromotionCandidate) : null),
    busy: (shard) => busy.has(shard),
    adopt: async (r) => {
      adopted.push(`adopt ${r.shard}@${r.epoch}`);
      led.set(r.shard, r.epoch);
    },
    now: () => t,
    setTimer: (fn, ms) => {
      timers.push({ at: t + ms, fn });
      // Time moves only here: the next timer fires on the next turn.
      setImmediate(() => {
        const next = timers.sort((a, b) => a.at - b.at).shift();
        if (next !== undefined) {
          t = next.at;
          next.fn();
        }
      });
    },
    deadlineMs: 1_000,
    awaitingHandOver: () => [],
    intervalMs: 10,
  };
}

describe("adoptBeforeStop: a stopping member adopts the rows handed over to it first, so the stop hands them on with their tables", () => {
  it("adopts a live row handed to this process that it does not lead, and nothing else", async () => {
    const adopted: string[] = [];
    const rows = [row(0, 3, "me"), row(1, 5, "me"), row(2, 4, "other"), row(3, 2, "me", true)];
    // Shard 1 is led already at its epoch; shard 2 is another member's; shard 3's row expired.
    await adoptBeforeStop(host(rows, new Map([[1, 5]]), [0, 1, 2, 3], adopted));
    expect(adopted).toEqual(["adopt 0@3"]);
  });

  it("adopts nothing without a replica to adopt with (the row then expires as before: nothing of its table is here)", async () => {
    const adopted: string[] = [];
    await adoptBeforeStop(host([row(0, 3, "me")], new Map(), [], adopted));
    expect(adopted).toEqual([]);
  });

  it("waits for an adoption already in flight instead of starting a second one", async () => {
    const adopted: string[] = [];
    const busy = new Set([0]);
    const led = new Map<number, number>();
    const h = host([row(0, 3, "me")], led, [0], adopted, busy);
    // The adoption in flight lands 20 ms later.
    h.setTimer(() => {
      busy.delete(0);
      led.set(0, 3);
    }, 20);
    await adoptBeforeStop(h);
    expect(adopted).toEqual([]);
    expect(led.get(0)).toBe(3);
  });

  it("gives up quietly when the rows cannot be read", async () => {
    const adopted: string[] = [];
    const h = { ...host([], new Map(), [0], adopted), readLeases: () => Promise.reject(new Error("down")) };
    await expect(adoptBeforeStop(h)).resolves.toBeUndefined();
    expect(adopted).toEqual([]);
  });

  // pnpm sim seed 9029: the stop's first read came before the row moved to the stopping taker,
  // whose replica had just acknowledged the hand-over entry.
  function movedAfterFirstRead(readOnce: boolean) {
    const adopted: string[] = [];
    const led = new Map<number, number>();
    let reads = 0;
    const h = host([], led, [2], adopted);
    return {
      adopted,
      run: adoptBeforeStop({
        ...h,
        readLeases: async () => (++reads === 1 ? [row(2, 2, "other")] : [row(2, 3, "me")]),
        awaitingHandOver: () => (led.has(2) ? [] : [2]),
        readOnce,
      }),
    };
  }

  it("awaits the move of a hand-over it acknowledged, reading the rows again, and adopts the row once moved", async () => {
    const { adopted, run } = movedAfterFirstRead(false);
    await run;
    expect(adopted).toEqual(["adopt 2@3"]);
  });

  it("negative control (stop-ignores-acked-hand-over): one read, and the row moved after it is left to expire", async () => {
    const { adopted, run } = movedAfterFirstRead(true);
    await run;
    expect(adopted).toEqual([]);
  });

  it("stops awaiting at the deadline when the row never moves", async () => {
    const adopted: string[] = [];
    const h = host([row(2, 2, "other")], new Map(), [2], adopted);
    await adoptBeforeStop({ ...h, awaitingHandOver: () => [2] });
    expect(adopted).toEqual([]);
    expect(h.now()).toBeGreaterThanOrEqual(1_000);
  });
});
