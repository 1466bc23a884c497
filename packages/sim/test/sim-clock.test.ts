import { describe, expect, it } from "vitest";
import { Scheduler } from "../src/scheduler.js";
import { SimProcess } from "../src/sim-clock.js";
import { SimRandom } from "../src/sim-random.js";

describe("the simulator's time", () => {
  it("runs events in time order, each after the promise callbacks of the one before", async () => {
    const s = new Scheduler();
    const p = new SimProcess("p", s);
    const seen: string[] = [];
    p.setTimer(() => seen.push(`b@${s.now}`), 20);
    p.setTimer(() => {
      seen.push(`a@${s.now}`);
      void Promise.resolve().then(() => seen.push("a's callback"));
    }, 10);
    await s.runUntil(100);
    expect(seen).toEqual(["a@10.000001", "a's callback", "b@20.000001"]);
  });

  it("a paused process runs nothing and its monotonic clock stands still; its wall clock jumps on resume", async () => {
    const s = new Scheduler();
    const p = new SimProcess("p", s);
    const fired: number[] = [];
    const mono0 = p.now();
    const wall0 = p.wall();
    p.setTimer(() => fired.push(s.now), 50);
    s.after(10, "world", "pause", () => p.pause());
    s.after(1_010, "world", "resume", () => p.resume());
    await s.runUntil(500);
    expect(fired).toEqual([]);
    expect(p.now() - mono0).toBeCloseTo(10, 6);
    await s.runUntil(2_000);
    // 40 ms of its own clock were left at the pause: it fires 40 ms after the resume.
    expect(fired[0]).toBeCloseTo(1_050, 3);
    expect(p.wall() - wall0).toBe(2_000);
    expect(p.now() - mono0).toBeCloseTo(1_000, 6);
  });

  it("a fast clock fires its timers early in true time; a crashed process runs nothing again", async () => {
    const s = new Scheduler();
    const fast = new SimProcess("fast", s);
    const dead = new SimProcess("dead", s);
    fast.drift(1.25);
    const at: number[] = [];
    fast.setTimer(() => at.push(s.now), 100);
    dead.setTimer(() => at.push(-1), 10);
    dead.deliver("message", () => at.push(-2));
    dead.kill();
    await s.runUntil(1_000);
    expect(at).toHaveLength(1);
    expect(at[0]).toBeCloseTo(80, 3);
  });

  it("the same seed gives the same choices and the same digest; forks are independent of later draws", async () => {
    const run = async (seed: number): Promise<string> => {
      const s = new Scheduler();
      const r = new SimRandom(seed);
      const p = new SimProcess("p", s);
      for (let i = 0; i < 50; i++) p.setTimer(() => s.note(String(r.int(0, 9))), r.int(0, 1_000));
      await s.runUntil(2_000);
      return s.hex();
    };
    expect(await run(7)).toBe(await run(7));
    expect(await run(7)).not.toBe(await run(8));
    const a = new SimRandom(1);
    const b = new SimRandom(1);
    const fa = a.fork("clients");
    const fb = b.fork("clients");
    a.u32();
    expect(fa.u32()).toBe(fb.u32());
  });
});
