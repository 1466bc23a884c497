import { afterEach, describe, expect, it } from "vitest";
import { runCli, startCli, type CliProcess } from "../support/cli-process.js";
import { waitFor } from "../support/wait-for.js";
import { fingerprint, get, lockToken, revoke } from "./inspection-fixture.js";

let running: CliProcess[] = [];
afterEach(async () => {
  for (const cli of running) {
    cli.child.kill("SIGTERM");
    await cli.exited;
  }
  running = [];
});

describe("CLI: inspection, revoke and the access log", () => {
  it("--help documents --allow-admin-without-auth", async () => {
    const { code, stdout } = await runCli(["--help"]);
    expect(code).toBe(0);
    expect(stdout).toContain("--allow-admin-without-auth");
  });

  it("with --allow-admin-without-auth and --log-level debug: revoke works, and every request has an access-log line", async () => {
    const cli = await startCli(["--host", "127.0.0.1", "--port", "0", "--allow-admin-without-auth", "--log-level", "debug"]);
    running.push(cli);
    expect(cli.lines.some((l) => l.msg === "--allow-admin-without-auth: anyone who reaches this server may revoke any lock")).toBe(true);
    const token = await lockToken(cli.url, "ops", { locks: [{ descriptor: "stuck", mode: "exclusive" }], clientDescription: "cron on host-9" });
    const page = await get(cli.url, "/v1/namespaces/ops/locks");
    expect(page.text).toContain("cron on host-9");
    const res = await revoke(cli.url, "ops", { descriptors: ["stuck"], reason: "cron hung" });
    expect(res.status, res.text).toBe(200);
    expect((res.json as { revoked: { fingerprint: string }[] }).revoked[0]!.fingerprint).toBe(fingerprint(token));
    await waitFor(() => cli.lines.filter((l) => l.msg === "request").length >= 3, "three access-log lines");
    expect(cli.lines.filter((l) => l.msg === "request").map((l) => [l.operation, l.namespace, l.status])).toEqual([
      ["lock", "ops", 200],
      ["locks", "ops", 200],
      ["revoke", "ops", 200],
    ]);
    expect(cli.lines.find((l) => l.msg === "revoked by an admin: released these holders")).toMatchObject({ reason: "cron hung", namespace: "ops" });
    expect(JSON.stringify(cli.lines)).not.toContain(token);
  });

  it("without the flag and without auth, revoke is 403", async () => {
    const cli = await startCli(["--host", "127.0.0.1", "--port", "0"]);
    running.push(cli);
    const res = await revoke(cli.url, "ops", { descriptors: ["x"] });
    expect(res.status).toBe(403);
  });
});
