import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { LockClient } from "../../src/index.js";
import { captureLogger } from "../support/capture-logger.js";
import { isAlive, killLeftovers, LEASEHOLD_BIN, pidFilesIn, runLeasehold, spawnNode, startServerCli, type ServerProcess } from "./cli-support.js";

// A child that says it is ready, then runs until a signal; $1 is what it does on SIGTERM.
const WAITING_CHILD = 'trap "$1" TERM HUP INT; echo $$ > "$2"; echo ready; while :; do sleep 0.02; done';

// Every test starts several node processes (about 1.5 s each on a loaded 2-core machine).
describe("leasehold lock, end to end against the server CLI", { timeout: 120_000 }, () => {
  let server: ServerProcess;
  let shortLease: ServerProcess;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let shortEnv: NodeJS.ProcessEnv;
  beforeAll(async () => {
    // The default lease, so a loaded machine never makes a holder lose its lock by accident.
    server = await startServerCli([]);
    // A short lease, so a holder whose refreshes stop loses its lock within a couple of seconds.
    shortLease = await startServerCli(["--lease-ms", "1500"]);
    dir = mkdtempSync(join(tmpdir(), "leasehold-cli-"));
    env = { LEASEHOLD_URL: server.url, LEASEHOLD_NAMESPACE: "cli-test" };
    shortEnv = { LEASEHOLD_URL: shortLease.url, LEASEHOLD_NAMESPACE: "cli-test" };
  });
  afterAll(async () => {
    await Promise.all([server.stop(), shortLease.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });
  afterEach(() => killLeftovers(pidFilesIn(dir)));

  function client(): LockClient {
    return LockClient.http({ baseUrl: shortLease.url, namespace: "cli-test", logger: captureLogger().logger });
  }

  it("runs the command with a growing fencing token, passes its exit status through and releases the lock", async () => {
    const first = await runLeasehold(["lock", "pass", "--", "sh", "-c", 'echo "fence=$LEASEHOLD_FENCING_TOKEN"; exit 7'], env);
    expect(first.code).toBe(7);
    const second = await runLeasehold(["lock", "pass", "--timeout", "0", "--", "sh", "-c", 'echo "fence=$LEASEHOLD_FENCING_TOKEN"'], env);
    // --timeout 0 only succeeds if the first run released the lock when its command ended.
    expect(second.code).toBe(0);
    const fence = (s: string): number => Number(/fence=(\d+)/.exec(s)?.[1]);
    expect(fence(first.stdout)).toBeGreaterThan(0);
    expect(fence(second.stdout)).toBeGreaterThan(fence(first.stdout));
  });

  it("holds the lock while the command runs: a second waiter times out with status 124 and never runs its command", async () => {
    const pidFile = join(dir, "holder.pid");
    const holder = spawnNode(LEASEHOLD_BIN, ["lock", "busy", "--", "sh", "-c", WAITING_CHILD, "sh", "exit 0", pidFile], env);
    await holder.waitForLine("ready");
    const marker = join(dir, "ran");
    const waiter = await runLeasehold(["lock", "busy", "--timeout", "300ms", "--", "sh", "-c", `touch ${marker}`], env);
    expect(waiter.code).toBe(124);
    expect(waiter.stderr).toMatch(/timed out waiting for the lock on "busy"/);
    expect(() => readFileSync(marker)).toThrow();
    holder.child.kill("SIGTERM");
    expect((await holder.exited).code).toBe(0);
  });

  it("shared mode and permits let several holders in at once", async () => {
    const pidA = join(dir, "a.pid");
    const a = spawnNode(LEASEHOLD_BIN, ["lock", "sem", "--permits", "2", "--", "sh", "-c", WAITING_CHILD, "sh", "exit 0", pidA], env);
    await a.waitForLine("ready");
    expect((await runLeasehold(["lock", "sem", "--permits", "2", "--timeout", "0", "--", "true"], env)).code).toBe(0);
    const b = spawnNode(LEASEHOLD_BIN, ["lock", "sem", "--permits", "2", "--", "sh", "-c", WAITING_CHILD, "sh", "exit 0", join(dir, "b.pid")], env);
    await b.waitForLine("ready");
    // Both permits are out now: a third must wait.
    expect((await runLeasehold(["lock", "sem", "--permits", "2", "--timeout", "200ms", "--", "true"], env)).code).toBe(124);
    a.child.kill("SIGTERM");
    b.child.kill("SIGTERM");
    await Promise.all([a.exited, b.exited]);
    const s = spawnNode(LEASEHOLD_BIN, ["lock", "doc", "--shared", "--", "sh", "-c", WAITING_CHILD, "sh", "exit 0", join(dir, "s.pid")], env);
    await s.waitForLine("ready");
    expect((await runLeasehold(["lock", "doc", "--shared", "--timeout", "0", "--", "true"], env)).code).toBe(0);
    expect((await runLeasehold(["lock", "doc", "--timeout", "0", "--", "true"], env)).code).toBe(124);
    s.child.kill("SIGINT");
    await s.exited;
  });

  // SIGINT and SIGHUP take the same path (FORWARDED_SIGNALS): supervised-child.test.ts forwards
  // each of the three in process; a real SIGINT also ends the shared holder above.
  it.each(["SIGTERM"] as const)("forwards %s to the command, exits with its status and releases the lock", async (signal) => {
    const pidFile = join(dir, `${signal}.pid`);
    const holder = spawnNode(LEASEHOLD_BIN, ["lock", `sig-${signal}`, "--", "sh", "-c", WAITING_CHILD, "sh", "echo got-signal; exit 42", pidFile], env);
    await holder.waitForLine("ready");
    holder.child.kill(signal);
    const { code } = await holder.exited;
    expect(holder.stdout()).toContain("got-signal");
    expect(code).toBe(42);
    expect((await runLeasehold(["lock", `sig-${signal}`, "--timeout", "0", "--", "true"], env)).code).toBe(0);
  });

  it("a signal while waiting cancels the wait: the command never runs and the request leaves the queue", async () => {
    const holder = spawnNode(LEASEHOLD_BIN, ["lock", "queue", "--", "sh", "-c", WAITING_CHILD, "sh", "exit 0", join(dir, "q.pid")], env);
    await holder.waitForLine("ready");
    const marker = join(dir, "queued-ran");
    const waiter = spawnNode(LEASEHOLD_BIN, ["lock", "queue", "--", "touch", marker], env);
    const queued = async (): Promise<number> => {
      const res = await fetch(`${server.url}/v1/namespaces/cli-test/locks?prefix=queue`);
      const page = (await res.json()) as { descriptors: { waiters: unknown[] }[] };
      return page.descriptors[0]?.waiters.length ?? 0;
    };
    for (let i = 0; i < 200 && (await queued()) === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await queued()).toBe(1);
    waiter.child.kill("SIGTERM");
    const { code } = await waiter.exited;
    expect(code).toBe(128 + 15);
    expect(waiter.stderr()).toMatch(/SIGTERM while waiting for the lock on "queue"; the command was not run/);
    // The aborted request's connection closes with the process; the server then drops it.
    for (let i = 0; i < 100 && (await queued()) !== 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await queued()).toBe(0);
    holder.child.kill("SIGTERM");
    await holder.exited;
    expect(() => readFileSync(marker)).toThrow();
  });

  it("a command killed by a signal gives 128 + its number", async () => {
    const r = await runLeasehold(["lock", "killed", "--", "sh", "-c", "kill -9 $$"], env);
    expect(r.code).toBe(128 + 9);
  });

  it("a lost lock (holder paused past its lease, lock taken by another) sends the command SIGTERM and exits 123, saying why", async () => {
    const pidFile = join(dir, "lost.pid");
    const holder = spawnNode(LEASEHOLD_BIN, ["lock", "lost", "--", "sh", "-c", WAITING_CHILD, "sh", "echo got-term; exit 0", pidFile], shortEnv);
    await holder.waitForLine("ready");
    const other = client();
    try {
      // Pause leasehold itself (not its command): its refreshes stop and the server reaps the lease.
      process.kill(holder.child.pid!, "SIGSTOP");
      const taken = await other.lock([{ descriptor: "lost", mode: "exclusive" }], { acquireTimeoutMs: 10_000 });
      expect(taken.status).toBe("acquired");
      process.kill(holder.child.pid!, "SIGCONT");
      const { code } = await holder.exited;
      expect(code).toBe(123);
      expect(holder.stdout()).toContain("got-term");
      expect(holder.stderr()).toMatch(/lost the lock on "lost" \(fencing token \d+\): .*sending the command SIGTERM/);
    } finally {
      if (holder.child.exitCode === null) process.kill(holder.child.pid!, "SIGCONT");
      await other.close();
    }
  });

  it("a command that ignores SIGTERM after a lost lock is killed after --kill-after", async () => {
    const pidFile = join(dir, "stubborn.pid");
    const holder = spawnNode(LEASEHOLD_BIN, ["lock", "stubborn", "--kill-after", "300ms", "--", "sh", "-c", WAITING_CHILD, "sh", "", pidFile], shortEnv);
    await holder.waitForLine("ready");
    const childPid = Number(readFileSync(pidFile, "utf8"));
    const other = client();
    try {
      process.kill(holder.child.pid!, "SIGSTOP");
      expect((await other.lock([{ descriptor: "stubborn", mode: "exclusive" }], { acquireTimeoutMs: 10_000 })).status).toBe("acquired");
      process.kill(holder.child.pid!, "SIGCONT");
      expect((await holder.exited).code).toBe(123);
      expect(isAlive(childPid)).toBe(false);
    } finally {
      if (holder.child.exitCode === null) process.kill(holder.child.pid!, "SIGCONT");
      await other.close();
    }
  });

  // Each mistake's message is checked in process (lock-command-usage.test.ts); here, that one reaches
  // the user as status 2 and a message naming the flag, from lock and from the subcommand choice.
  it("refuses bad flags with a message naming the flag and status 2, running nothing", async () => {
    const marker = join(dir, "bad-flag-ran");
    const cases: [string[], RegExp][] = [
      [["lock", "d", "--timout", "1s", "--", "touch", marker], /--timout/],
      [["frobnicate"], /unknown subcommand "frobnicate"/],
    ];
    for (const [args, message] of cases) {
      const r = await runLeasehold(args, env);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr, args.join(" ")).toMatch(message);
    }
    expect(() => readFileSync(marker)).toThrow();
  });

  it("--help documents the exit statuses", async () => {
    const r = await runLeasehold(["lock", "--help"]);
    expect(r.code).toBe(0);
    for (const status of ["123", "124", "125", "126", "127"]) expect(r.stdout).toContain(`  ${status} `);
  });

  it("an unreachable server exits 125 and a missing command 127", async () => {
    const down = await runLeasehold(["lock", "d", "--url", "http://127.0.0.1:1", "--", "true"], env);
    expect(down.code).toBe(125);
    expect(down.stderr).toMatch(/could not take the lock on "d"/);
    const missing = await runLeasehold(["lock", "d", "--", join(dir, "no-such-command")], env);
    expect(missing.code).toBe(127);
    expect((await runLeasehold(["lock", "d", "--timeout", "0", "--", "true"], env)).code).toBe(0);
  });
});

describe("leasehold lock with authentication", { timeout: 120_000 }, () => {
  let server: ServerProcess;
  let dir: string;
  const token = "cli-token-0123456789abcdef";
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "leasehold-cli-auth-"));
    writeFileSync(join(dir, "auth.json"), JSON.stringify({ "*": [token] }));
    writeFileSync(join(dir, "token"), `${token}\n`);
    server = await startServerCli(["--auth-file", join(dir, "auth.json")]);
  });
  afterAll(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("sends the token from LEASEHOLD_TOKEN or --token-file, and a refused one exits 125", async () => {
    const env = { LEASEHOLD_URL: server.url, LEASEHOLD_NAMESPACE: "auth" };
    expect((await runLeasehold(["lock", "a", "--", "true"], { ...env, LEASEHOLD_TOKEN: token })).code).toBe(0);
    expect((await runLeasehold(["lock", "a", "--token-file", join(dir, "token"), "--", "true"], env)).code).toBe(0);
    const refused = await runLeasehold(["lock", "a", "--", "true"], { ...env, LEASEHOLD_TOKEN: "wrong-token-0123456789" });
    expect(refused.code).toBe(125);
    expect(refused.stderr).toMatch(/UNAUTHENTICATED/);
    expect(refused.stderr).not.toContain("wrong-token");
  });
});
