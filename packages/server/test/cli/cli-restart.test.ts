import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startCli, type CliProcess } from "../support/cli-process.js";
import { HttpLockService } from "../support/http-lock-service.js";
import { rawRequest, errorOf } from "../support/raw-request.js";

const NS = "restart";
const ex = (descriptor: string) => ({ descriptor, mode: "exclusive" as const });

interface Before {
  readonly leaderId: string;
  readonly token: string;
  readonly txnToken: string;
  /** The largest number of any kind the first process handed out. */
  readonly highest: number;
}

/** Take locks, timestamps and a transaction on a fresh process; return what must not survive or repeat. */
async function useServer(url: string): Promise<Before> {
  const client = new HttpLockService(url);
  const { leaderId } = await client.health();
  const locked = await client.lock(NS, { locks: [ex("d"), ex("e")] });
  if (locked.status !== "acquired") throw new Error("not acquired");
  const concurrent = await Promise.all(Array.from({ length: 20 }, (_, i) => client.timestamps(NS, { count: 50 + i })));
  const txn = await client.startTransactions(NS, { count: 2 });
  const numbers = [
    ...locked.acquired.map((l) => l.fencingToken),
    ...concurrent.map((r) => r.start + r.count - 1),
    ...txn.transactions.map((t) => t.startTimestamp),
  ];
  return { leaderId, token: locked.token, txnToken: txn.transactions[0]!.token, highest: Math.max(...numbers) };
}

/** On the restarted process: everything continues above `before`, and old tokens are void. */
async function checkContinues(url: string, before: Before): Promise<void> {
  const client = new HttpLockService(url);
  expect((await client.health()).leaderId).not.toBe(before.leaderId);
  const ts = await client.timestamps(NS, { count: 1 });
  expect(ts.start).toBeGreaterThan(before.highest);
  const relocked = await client.lock(NS, { locks: [ex("d")] });
  if (relocked.status !== "acquired") throw new Error("the lock from the old process is still held");
  expect(relocked.acquired[0]!.fencingToken).toBeGreaterThan(before.highest);
  expect(relocked.lease.leaderId).not.toBe(before.leaderId);
  expect((await client.refresh(NS, { tokens: [before.token, before.txnToken] })).refreshed).toEqual([]);
  expect((await client.unlock(NS, { tokens: [before.token] })).unlocked).toEqual([]);
  expect((await client.immutableTimestamp(NS, {})).immutableTimestamp).toBeGreaterThan(before.highest);
  const txn = await client.startTransactions(NS, { count: 1 });
  expect(txn.transactions[0]!.startTimestamp).toBeGreaterThan(before.highest);
  await client.unlock(NS, { tokens: [relocked.token, txn.transactions[0]!.token] });
}

describe("CLI: stop and restart on the same --data-dir", () => {
  const running: CliProcess[] = [];
  const dirs: string[] = [];
  const dataDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), "leasehold-cli-"));
    dirs.push(dir);
    return dir;
  };
  const start = async (dir: string): Promise<CliProcess> => {
    const cli = await startCli(["--host", "127.0.0.1", "--port", "0", "--data-dir", dir, "--lease-ms", "60000"]);
    running.push(cli);
    return cli;
  };
  afterEach(async () => {
    for (const cli of running.splice(0)) {
      if (cli.child.exitCode === null && cli.child.signalCode === null) {
        cli.child.kill("SIGKILL");
        await cli.exited;
      }
    }
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("SIGTERM: waiting requests get 503, exit 0; the next process continues every number and voids old tokens", async () => {
    const dir = dataDir();
    const first = await start(dir);
    expect(first.lines.find((l) => l.msg === "listening")).toMatchObject({ url: first.url });
    const before = await useServer(first.url);
    const waiting = rawRequest(first.url, `/v1/namespaces/${NS}/lock`, {
      body: JSON.stringify({ locks: [ex("d")], acquireTimeoutMs: 60_000 }),
      headers: { "content-type": "application/json" },
    });
    // The signal must find the request queued: watch it arrive through /metrics.
    for (;;) {
      const metrics = await rawRequest(first.url, "/metrics", { method: "GET" });
      if (/^leasehold_waiting_requests 1$/m.test(metrics.text)) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    first.child.kill("SIGTERM");
    const answer = await waiting;
    expect(answer.status).toBe(503);
    expect(errorOf(answer).code).toBe("UNAVAILABLE");
    expect(await first.exited).toEqual({ code: 0, signal: null });
    expect(first.lines.some((l) => l.msg === "stopped")).toBe(true);

    const second = await start(dir);
    await checkContinues(second.url, before);
    second.child.kill("SIGINT");
    expect(await second.exited).toEqual({ code: 0, signal: null });
  });

  it("SIGKILL: the next process still continues every number and voids old tokens", async () => {
    const dir = dataDir();
    const first = await start(dir);
    const before = await useServer(first.url);
    first.child.kill("SIGKILL");
    expect((await first.exited).signal).toBe("SIGKILL");

    const second = await start(dir);
    await checkContinues(second.url, before);
    // And once more, so a bound written by a restarted process is honoured too.
    const again = await useServer(second.url);
    second.child.kill("SIGKILL");
    await second.exited;
    const third = await start(dir);
    await checkContinues(third.url, again);
  });
});
