import { describe, expect, it } from "vitest";
import { FORWARDED_SIGNALS, SupervisedChild } from "../../src/cli/supervised-child.js";

const listeners = (): number[] => FORWARDED_SIGNALS.map((s) => process.listenerCount(s));

describe("SupervisedChild", () => {
  it("a command spawn() refuses at once (an empty name) ends as 126 with the reason, and its signal handlers come out", async () => {
    const before = listeners();
    const child = new SupervisedChild("", [], process.env);
    const outcome = await child.ended;
    expect(outcome.status).toBe(126);
    expect(outcome.startError).toMatch(/file.*empty|empty/i);
    expect(listeners()).toEqual(before);
    child.terminate(10); // harmless: nothing runs
  });

  it("forwards its signal handlers only while the command runs, and answers the command's status", async () => {
    const before = listeners();
    const child = new SupervisedChild(process.execPath, ["-e", "process.exit(3)"], process.env);
    expect(listeners()).toEqual(before.map((n) => n + 1));
    expect((await child.ended).status).toBe(3);
    expect(listeners()).toEqual(before);
  });
});
