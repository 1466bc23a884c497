import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JobSemaphore, type HeldLock, type JobStart, type LostLock } from "../../src/index.js";
import { recipeServer, sleep, type RecipeServer } from "./support/recipe-server.js";

const LEASE_MS = 1_000; // short: dead-holder reclamation is the subject of some tests here
const CLIENT_DIST = fileURLToPath(new URL("../../dist/index.js", import.meta.url));
const CHILD = fileURLToPath(new URL("./fixtures/hold-permit.mjs", import.meta.url));

function granted(start: JobStart): HeldLock {
  if (start.status !== "acquired") throw new Error("expected a permit");
  return start;
}

describe("job semaphore over HTTP: concurrency limits for batch jobs", () => {
  let env: RecipeServer;
  let job = 0;
  const semaphore = (limit: number, name = `job-${++job}`) => new JobSemaphore(env.client(), name, { limit });

  beforeAll(async () => {
    env = await recipeServer({ namespace: "jobs", leaseMs: LEASE_MS });
  });
  afterAll(() => env.close());

  it("limit 1: a second start is denied at once, then granted after the first completes", async () => {
    const a = semaphore(1, "singleton");
    const b = semaphore(1, "singleton");
    const first = granted(await a.start());
    const before = performance.now();
    expect((await b.start()).status).toBe("timeout");
    expect(performance.now() - before).toBeLessThan(500); // answered, not waited out
    expect(await first.release()).toBe(true);
    const second = granted(await b.start());
    expect(await second.release()).toBe(true);
  });

  it("limit 4: five starts give four grants and one denial", async () => {
    const name = "four";
    const starts = await Promise.all(Array.from({ length: 5 }, () => semaphore(4, name).start()));
    const permits = starts.filter((s) => s.status === "acquired");
    expect(permits).toHaveLength(4);
    expect(starts.filter((s) => s.status === "timeout")).toHaveLength(1);
    for (const s of permits) expect(await granted(s).release()).toBe(true);
  });

  it("waits when asked, and is granted as soon as a permit comes back", async () => {
    const holder = granted(await semaphore(1, "waiting").start());
    const waiter = semaphore(1, "waiting").start({ acquireTimeoutMs: 5_000 });
    await sleep(100);
    const releasedAt = performance.now();
    await holder.release();
    const permit = granted(await waiter);
    expect(performance.now() - releasedAt).toBeLessThan(500);
    await permit.release();
  });

  it("reclaims the permit of a holder process killed with SIGKILL within the lease", async () => {
    if (!existsSync(CLIENT_DIST) || !readFileSync(CLIENT_DIST, "utf8").includes("JobSemaphore")) {
      throw new Error(`${CLIENT_DIST} is missing or stale: run \`pnpm build\` first`);
    }
    const child: ChildProcess = spawn(process.execPath, [CHILD, env.server.url, "jobs", "crashy", "1"], { stdio: ["ignore", "pipe", "inherit"] });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout! }).once("line", resolve);
        child.once("exit", (code) => reject(new Error(`child exited early (${String(code)})`)));
      });
      expect(JSON.parse(line)).toEqual({ status: "acquired" });
      const next = semaphore(1, "crashy");
      expect((await next.start()).status).toBe("timeout");
      // The child's refresher keeps its permit alive past a lease…
      await sleep(LEASE_MS * 1.5);
      expect((await next.start()).status).toBe("timeout");
      // …until it dies without a word.
      const killedAt = performance.now();
      child.kill("SIGKILL");
      const permit = granted(await next.start({ acquireTimeoutMs: 5 * LEASE_MS }));
      const reclaimedAfter = performance.now() - killedAt;
      expect(reclaimedAfter).toBeLessThanOrEqual(LEASE_MS + 300); // the lapse itself is at most one lease after the last refresh
      await permit.release();
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("never reclaims a holder that keeps refreshing, however many leases pass", async () => {
    const holderClient = env.client();
    const holderSemaphore = new JobSemaphore(holderClient, "steady", { limit: 1 });
    const lost: LostLock[] = [];
    holderClient.lostLocks.subscribe((event) => lost.push(event));
    const permit = granted(await holderSemaphore.start());
    const other = semaphore(1, "steady");
    const until = performance.now() + 4 * LEASE_MS;
    let denials = 0;
    while (performance.now() < until) {
      expect((await other.start()).status).toBe("timeout");
      denials++;
      await sleep(50);
    }
    expect(denials).toBeGreaterThan(20);
    expect(permit.signal.aborted).toBe(false);
    expect(lost).toEqual([]);
    expect(await permit.release()).toBe(true); // still held after four leases
    granted(await other.start()).releaseInBackground();
  });

  it("a limit lowered live from 4 to 2 revokes nothing and grants nothing new until fewer than 2 hold", async () => {
    const name = "knob";
    const holders = await Promise.all(Array.from({ length: 4 }, () => semaphore(4, name).start().then(granted)));
    const lowered = semaphore(4, name);
    lowered.setLimit(2);
    expect(lowered.limit).toBe(2);
    const before = performance.now();
    expect((await lowered.start()).status).toBe("timeout"); // 4 hold
    await holders[0]!.release();
    expect((await lowered.start()).status).toBe("timeout"); // 3 hold
    await holders[1]!.release();
    expect((await lowered.start()).status).toBe("timeout"); // 2 hold: not fewer than 2
    // Nothing was revoked: the two remaining holders are still held, past a whole lease.
    await sleep(Math.max(0, before + LEASE_MS * 1.2 - performance.now()));
    expect(holders[2]!.signal.aborted).toBe(false);
    expect(holders[3]!.signal.aborted).toBe(false);
    await holders[2]!.release();
    const permit = granted(await lowered.start()); // 1 holds: granted
    expect((await lowered.start()).status).toBe("timeout"); // 2 hold again
    expect(await holders[3]!.release()).toBe(true);
    expect(await permit.release()).toBe(true);
    expect(() => lowered.setLimit(0)).toThrow(/limit/);
  });

  it("15 workers × 100 start/work/complete never exceed the limit, by the workers' own count", async () => {
    const LIMIT = 3;
    const name = "busy";
    let running = 0;
    let maxRunning = 0;
    let executions = 0;
    const errors: unknown[] = [];
    const worker = async (): Promise<void> => {
      const jobs = semaphore(LIMIT, name);
      for (let i = 0; i < 100; i++) {
        try {
          const start = await jobs.start({ acquireTimeoutMs: 10_000 });
          if (start.status !== "acquired") throw new Error("no permit after 10 s");
          running++;
          maxRunning = Math.max(maxRunning, running);
          executions++;
          await sleep(1 + Math.random() * 2); // the work: long enough for other grants to land meanwhile
          running--; // counted out before the permit goes back, never after
          await start.release();
        } catch (err) {
          errors.push(err);
        }
      }
    };
    await Promise.all(Array.from({ length: 15 }, worker));
    expect(errors).toEqual([]);
    expect(executions).toBe(1_500);
    expect(maxRunning).toBeLessThanOrEqual(LIMIT);
    expect(maxRunning).toBe(LIMIT); // the limit was actually reached, so the check could fail
  });

  it("run() gives the permit back after the work, even when it throws", async () => {
    const jobs = semaphore(1, "run");
    await expect(jobs.run(() => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    const result = await jobs.run((_signal, permit) => permit.acquired[0]!.fencingToken);
    expect(result.status).toBe("acquired");
    await expect.poll(() => env.server.service.snapshot("jobs").descriptors.some((d) => d.descriptor === "job:run")).toBe(false);
  });
});
