import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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

  it.each(FORWARDED_SIGNALS)("passes %s on to the command (a real child that traps it) and answers the status it exits with", async (signal) => {
    const dir = mkdtempSync(join(tmpdir(), "supervised-"));
    const pidFile = join(dir, "child.pid");
    try {
      const before = process.listeners(signal);
      // The trap is set before the pid file is written: once it exists, the signal is caught.
      const child = new SupervisedChild("sh", ["-c", 'trap "exit 42" TERM HUP INT; echo $$ > "$1"; while :; do sleep 0.02; done', "sh", pidFile], process.env);
      const added = process.listeners(signal).filter((l) => !before.includes(l));
      expect(added).toHaveLength(1);
      for (let i = 0; i < 500 && !existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 10));
      // What the process does when the signal arrives, without sending it to the test's own process.
      added[0]!(signal);
      expect((await child.ended).status).toBe(42);
      expect(process.listeners(signal)).toEqual(before);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
