import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DescriptorsPage, NamespacesResponse, RevokeResponse } from "@leasehold/protocol";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { LockClient } from "../../src/index.js";
import { captureLogger } from "../support/capture-logger.js";
import { killLeftovers, LEASEHOLD_BIN, pidFilesIn, runLeasehold, spawnNode, startServerCli, type ServerProcess } from "./cli-support.js";

const WAITING_CHILD = 'trap "echo got-term; exit 0" TERM; echo $$ > "$1"; echo ready; while :; do sleep 0.02; done';

describe("leasehold inspect and revoke, end to end", { timeout: 120_000 }, () => {
  let server: ServerProcess;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  const clients: LockClient[] = [];
  beforeAll(async () => {
    server = await startServerCli(["--allow-admin-without-auth"]);
    dir = mkdtempSync(join(tmpdir(), "leasehold-inspect-"));
    env = { LEASEHOLD_URL: server.url, LEASEHOLD_NAMESPACE: "ops" };
  });
  afterEach(() => killLeftovers(pidFilesIn(dir)));
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  function client(): LockClient {
    const c = LockClient.http({ baseUrl: server.url, namespace: "ops", logger: captureLogger().logger });
    clients.push(c);
    return c;
  }

  it("shows a holder and its waiters in queue order, as a table and as JSON; revoke by fingerprint frees the first waiter and the holder's command is stopped", async () => {
    const holder = spawnNode(LEASEHOLD_BIN, ["lock", "invoice-17", "--description", "invoicer on host-3", "--", "sh", "-c", WAITING_CHILD, "sh", join(dir, "h.pid")], env);
    await holder.waitForLine("ready");
    const first = client().lock([{ descriptor: "invoice-17", mode: "exclusive" }], { acquireTimeoutMs: 60_000, clientDescription: "first waiter" });
    const second = client().lock([{ descriptor: "invoice-17", mode: "exclusive" }], { acquireTimeoutMs: 60_000, clientDescription: "second waiter" });
    // Both waiters are queued once the summary counts them.
    let page: DescriptorsPage | undefined;
    for (let i = 0; i < 100; i++) {
      const r = await runLeasehold(["inspect", "ops", "--json"], env);
      expect(r.code).toBe(0);
      page = JSON.parse(r.stdout) as DescriptorsPage;
      if (page.summary.waitingRequests === 2) break;
    }
    const d = page!.descriptors.find((x) => x.descriptor === "invoice-17")!;
    expect(d.holders.map((h) => h.clientDescription)).toEqual(["invoicer on host-3"]);
    expect(d.waiters.map((w) => w.clientDescription)).toEqual(["first waiter", "second waiter"]);
    const fingerprint = d.holders[0]!.fingerprint!;
    expect(fingerprint).toMatch(/^[0-9a-f]{16}$/);

    const table = await runLeasehold(["inspect", "ops"], env);
    expect(table.code).toBe(0);
    const lines = table.stdout.split("\n");
    expect(lines[1]).toMatch(/^DESCRIPTOR\s+ROLE\s+MODE\s+FENCE\s+FINGERPRINT\s+AGE\s+LEFT\s+DESCRIPTION$/);
    expect(lines[2]).toMatch(new RegExp(`^invoice-17\\s+holder\\s+exclusive\\s+\\d+\\s+${fingerprint}\\s+\\S+\\s+\\S+\\s+invoicer on host-3$`));
    expect(lines[3]).toMatch(/^\s+waiter 1\s+exclusive\s+-\s+-\s+\S+\s+\S+\s+first waiter$/);
    expect(lines[4]).toMatch(/^\s+waiter 2\s+exclusive\s+-\s+-\s+\S+\s+\S+\s+second waiter$/);

    const all = await runLeasehold(["inspect", "--json"], env);
    const ops = (JSON.parse(all.stdout) as NamespacesResponse).namespaces.find((n) => n.namespace === "ops");
    expect(ops).toMatchObject({ heldLocks: 1, waitingRequests: 2 });
    expect((await runLeasehold(["inspect"], env)).stdout).toMatch(/^NAMESPACE\s+HELD\s+TOKENS\s+WAITING/);

    const revoked = await runLeasehold(["revoke", "ops", "--fingerprint", fingerprint, "--reason", "test: wedged", "--json"], env);
    expect(revoked.code).toBe(0);
    const answer = JSON.parse(revoked.stdout) as RevokeResponse;
    expect(answer.revoked).toEqual([expect.objectContaining({ fingerprint, descriptors: ["invoice-17"], clientDescription: "invoicer on host-3" })]);
    // The first waiter is granted at once; the second still waits.
    const granted = await first;
    expect(granted.status).toBe("acquired");
    // The revoked holder learns it at its next refresh and stops its command.
    const { code } = await holder.exited;
    expect(code).toBe(123);
    expect(holder.stdout()).toContain("got-term");
    expect(holder.stderr()).toMatch(/lost the lock on "invoice-17".*the server no longer holds it/);
    if (granted.status === "acquired") await clients[0]!.unlock([granted.token]);
    expect((await second).status).toBe("acquired");
  });

  it("revoke by descriptor, a fingerprint that matches nothing (exit 1), and bad arguments (exit 2)", async () => {
    const c = client();
    const held = await c.lock([{ descriptor: "stuck", mode: "exclusive" }], { clientDescription: "stuck one" });
    expect(held.status).toBe("acquired");
    const r = await runLeasehold(["revoke", "--descriptor", "stuck"], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/revoked 1 holder in namespace ops/);
    expect(r.stdout).toMatch(/stuck one/);
    const none = await runLeasehold(["revoke", "--fingerprint", "0123456789abcdef"], env);
    expect(none.code).toBe(1);
    expect(none.stdout).toMatch(/not found: 0123456789abcdef/);
    for (const [args, message] of [
      [["revoke"], /--fingerprint or --descriptor/],
      [["revoke", "--fingerprint", "XYZ"], /--fingerprint must be 16 lower-case hexadecimal digits/],
      [["revoke", "--fingerprint", "0123456789abcdef", "--descriptor", "d"], /one kind/],
      [["inspect", "ops", "--view", "everything"], /--view must be one of/],
      [["inspect", "--prefix", "x"], /need a namespace/],
      [["inspect", "ops", "--limit", "0"], /--limit must be an integer/],
    ] as const) {
      const bad = await runLeasehold(args, env);
      expect(bad.code, args.join(" ")).toBe(2);
      expect(bad.stderr, args.join(" ")).toMatch(message);
    }
  });
});

describe("leasehold revoke needs an admin token", { timeout: 120_000 }, () => {
  let server: ServerProcess;
  let dir: string;
  const admin = "admin-token-0123456789abcdef";
  const worker = "worker-token-0123456789abcdef";
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "leasehold-revoke-auth-"));
    writeFileSync(join(dir, "auth.json"), JSON.stringify({ "@admin": [admin], ops: [worker] }));
    server = await startServerCli(["--auth-file", join(dir, "auth.json")]);
  });
  afterAll(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a namespace token may inspect but not revoke (125, PERMISSION_DENIED); the admin token revokes", async () => {
    const env = { LEASEHOLD_URL: server.url, LEASEHOLD_NAMESPACE: "ops" };
    expect((await runLeasehold(["inspect", "ops"], { ...env, LEASEHOLD_TOKEN: worker })).code).toBe(0);
    const denied = await runLeasehold(["revoke", "--descriptor", "x"], { ...env, LEASEHOLD_TOKEN: worker });
    expect(denied.code).toBe(125);
    expect(denied.stderr).toMatch(/PERMISSION_DENIED/);
    const anonymous = await runLeasehold(["inspect", "ops"], env);
    expect(anonymous.code).toBe(125);
    expect(anonymous.stderr).toMatch(/UNAUTHENTICATED/);
    const allowed = await runLeasehold(["revoke", "--descriptor", "x"], { ...env, LEASEHOLD_TOKEN: admin });
    expect(allowed.code).toBe(1);
    expect(allowed.stdout).toMatch(/nothing revoked/);
  });
});
