import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { startServer } from "../../src/start-server.js";
import { CLI_PATH, runCli, startCli } from "../support/cli-process.js";
import { rawRequest } from "../support/raw-request.js";
import { lockBody, post } from "./security-fixture.js";

const TOKEN = "cli-bearer-token-0123456789";

async function stop(cli: Awaited<ReturnType<typeof startCli>>): Promise<void> {
  cli.child.kill("SIGTERM");
  await cli.exited;
}

describe("binding", () => {
  it("startServer() binds 127.0.0.1 when no host is given", async () => {
    const server = await startServer();
    try {
      expect(new URL(server.url).hostname).toBe("127.0.0.1");
    } finally {
      await server.close();
    }
  });

  it("the CLI binds 127.0.0.1 when no --host is given", async () => {
    const cli = await startCli(["--port", "0", "--log-level", "info"]);
    try {
      expect(new URL(cli.url).hostname).toBe("127.0.0.1");
    } finally {
      await stop(cli);
    }
  });
});

describe("CLI security flags", () => {
  it("--help shows every security flag with its default", async () => {
    const { code, stdout } = await runCli(["--help"]);
    expect(code).toBe(0);
    for (const flag of ["--auth-file", "--max-connections", "--max-waiting-per-namespace", "--rate-limit", "LEASEHOLD_AUTH_TOKENS"]) expect(stdout).toContain(flag);
    for (const fallback of ["10000", "100000", "off", "none"]) expect(stdout).toContain(`default: ${fallback}`);
  });

  it.each([
    [["--max-connections", "0"], "--max-connections"],
    [["--max-waiting-per-namespace", "x"], "--max-waiting-per-namespace"],
    [["--rate-limit", "-1"], "--rate-limit"],
    [["--auth-token", TOKEN], "--auth-token"],
    [["--auth-file", "/nonexistent/auth.json"], "--auth-file"],
  ])("refuses %j on stderr with exit code 2, never echoing a token", async (args, mentions) => {
    const { code, stderr } = await runCli(args);
    expect(code).toBe(2);
    expect(stderr).toContain(mentions);
  });

  it("reads tokens from --auth-file and enforces them", async () => {
    const dir = mkdtempSync(join(tmpdir(), "leasehold-cli-auth-"));
    const file = join(dir, "auth.json");
    writeFileSync(file, JSON.stringify({ "*": [TOKEN] }));
    const cli = await startCli(["--port", "0", "--auth-file", file, "--rate-limit", "1000", "--max-connections", "50", "--max-waiting-per-namespace", "10"]);
    try {
      expect((await post(cli.url, "ns", "lock", lockBody("a"))).status).toBe(401);
      expect((await post(cli.url, "ns", "lock", lockBody("a"), TOKEN)).status).toBe(200);
      expect((await rawRequest(cli.url, "/v1/health", { method: "GET" })).status).toBe(200);
    } finally {
      await stop(cli);
      rmSync(dir, { recursive: true, force: true });
    }
    expect(JSON.stringify(cli.lines)).not.toContain(TOKEN);
  });

  it("reads tokens from LEASEHOLD_AUTH_TOKENS and refuses a malformed table at start", async () => {
    const env = { ...process.env, LEASEHOLD_AUTH_TOKENS: JSON.stringify({ ns: [TOKEN] }) };
    const child = spawn(process.execPath, [CLI_PATH, "--port", "0"], { env, stdio: ["ignore", "pipe", "pipe"] });
    const url = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString();
        const m = /"msg":"listening"[^\n]*?"url":"([^"]+)"|"url":"([^"]+)"[^\n]*"msg":"listening"/.exec(out);
        const found = m?.[1] ?? m?.[2];
        if (found !== undefined) resolve(found);
      });
      child.once("exit", () => reject(new Error("exited before listening")));
    });
    try {
      expect((await post(url, "ns", "lock", lockBody("a"))).status).toBe(401);
      expect((await post(url, "ns", "lock", lockBody("a"), TOKEN)).status).toBe(200);
      expect((await post(url, "other", "lock", lockBody("a"), TOKEN)).status).toBe(401);
    } finally {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    const bad = spawn(process.execPath, [CLI_PATH, "--port", "0"], { env: { ...process.env, LEASEHOLD_AUTH_TOKENS: '{"ns": ["short"]}' }, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    bad.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => bad.once("exit", resolve));
    expect(code).toBe(2);
    expect(stderr).toContain("LEASEHOLD_AUTH_TOKENS");
    expect(stderr).not.toContain("short");
  });
});
