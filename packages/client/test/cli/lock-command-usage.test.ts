import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { lockCommand } from "../../src/cli/lock-command.js";
import { UsageError } from "../../src/cli/usage-error.js";

/**
 * `leasehold lock`'s command-line mistakes, in process: each is refused as a {@link UsageError}
 * naming the flag, before any client is made or command run. How a UsageError reaches the user
 * (stderr, status 2) is the process test's in leasehold-lock.test.ts.
 */
describe("leasehold lock refuses bad flags, running nothing", () => {
  const dir = mkdtempSync(join(tmpdir(), "leasehold-usage-"));
  const marker = join(dir, "bad-flag-ran");
  // Nothing listens here: a mistake that got past the parser would fail with something else.
  const env = { LEASEHOLD_URL: "http://127.0.0.1:1", LEASEHOLD_NAMESPACE: "cli-test" };
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const cases: [string[], RegExp][] = [
    [["d", "--timout", "1s", "--", "touch", marker], /--timout/],
    [["d", "--timeout", "soon", "--", "touch", marker], /--timeout must be a duration/],
    [["d", "--permits", "0", "--", "touch", marker], /--permits must be an integer/],
    [["d", "--shared", "--permits", "2", "--", "touch", marker], /--shared and --permits/],
    [["d", "touch", marker], /after "--"/],
    [["--", "touch", marker], /descriptor is missing/],
    [["d", "--namespace", "bad/ns", "--", "touch", marker], /--namespace must match/],
    [["d", "--url", "ftp://x", "--", "touch", marker], /--url must be an http/],
  ];
  it.each(cases)("lock %j", async (args, message) => {
    const refusal = await lockCommand(args, env).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refusal).toBeInstanceOf(UsageError);
    expect((refusal as Error).message).toMatch(message);
    expect(() => readFileSync(marker)).toThrow();
  });

  it("an empty LEASEHOLD_NAMESPACE is a missing namespace", async () => {
    await expect(lockCommand(["d", "--", "touch", marker], { ...env, LEASEHOLD_NAMESPACE: "" })).rejects.toThrow(/namespace is missing/);
    expect(() => readFileSync(marker)).toThrow();
  });
});
