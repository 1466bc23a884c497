import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { runCli } from "../support/cli-process.js";

describe("CLI flags", () => {
  it("--help prints every option with its default and exits 0", async () => {
    const { code, stdout } = await runCli(["--help"]);
    expect(code).toBe(0);
    for (const option of ["--host", "--port", "--data-dir", "--lease-ms", "--log-level", "--help", "--cluster", "--advertise-url", "--server-id", "--leader-lease-ms", "--shards", "--replicas", "import-bound"]) {
      expect(stdout).toContain(option);
    }
    for (const fallback of ["127.0.0.1", "7878", "10000", "info", "3000", "64"]) expect(stdout).toContain(`default: ${fallback}`);
    expect(stdout).toMatch(/SIGTERM/);
  });

  const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };

  it.each([["--version"], ["-v"]])("%s prints the package.json version alone and exits 0", async (flag) => {
    const { code, stdout, stderr } = await runCli([flag]);
    expect(code).toBe(0);
    expect(stdout).toBe(`${version}\n`);
    expect(stderr).toBe("");
  });

  it("--help names the version and the --version flag", async () => {
    const { stdout } = await runCli(["--help"]);
    expect(stdout.split("\n")[0]).toContain(`leasehold-server ${version}:`);
    expect(stdout).toContain("--version");
  });

  it.each([
    [["--port", "abc"], "--port"],
    [["--port", "70000"], "--port"],
    [["--lease-ms", "0"], "--lease-ms"],
    [["--lease-ms", "1.5"], "--lease-ms"],
    [["--log-level", "loud"], "--log-level"],
    [["--bogus"], "--bogus"],
    [["--port"], "--port"],
    [["serve"], "serve"],
    [["--leader-lease-ms", "10"], "--leader-lease-ms"],
    [["--shards", "0"], "--shards"],
    [["--shards", "5000"], "--shards"],
    [["--replicas", "2"], "--replicas"],
    [["--advertise-url", "10.0.0.1:7878"], "--advertise-url"],
    [["--cluster", ""], "--cluster"],
  ])("refuses %j with a clear message on stderr and exit code 2", async (args, mentions) => {
    const { code, stdout, stderr } = await runCli(args);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toContain(mentions);
    expect(stderr).toContain("--help");
  });
});
