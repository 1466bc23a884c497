import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll } from "vitest";

/**
 * Setup file of the `serial` project (vitest.config.ts): the reliability suite's loaded runs share
 * two workers with the cluster scenario files, and this keeps two of them from ever running at once.
 * vitest.order.ts orders the group so that each runs beside cluster files; when a file's real
 * length strays from the plan and a worker takes the next loaded run early, that run waits here for
 * the one still running. The lock is a directory per checkout in the temp directory, holding the
 * owner's pid: a lock whose owner died (a worker killed at a timeout) is taken over.
 */
const LOCK = join(tmpdir(), `leasehold-vitest-alone-${createHash("sha256").update(process.cwd()).digest("hex").slice(0, 12)}`);
const OWNER = join(LOCK, "pid");
/** How long a file waits for the lock at most: longer than the longest loaded run, several times over. */
const WAIT_MS = 15 * 60_000;
/** A lock directory without an owner's pid for this long was left by a process that died taking it. */
const ORPHAN_MS = 60_000;

function ownerAlive(): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(OWNER, "utf8"));
  } catch {
    try {
      return Date.now() - statSync(LOCK).mtimeMs < ORPHAN_MS;
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

beforeAll(async () => {
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(OWNER, String(process.pid));
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    if (!ownerAlive()) rmSync(LOCK, { recursive: true, force: true });
    else await sleep(100);
  }
}, WAIT_MS);

afterAll(() => {
  try {
    if (readFileSync(OWNER, "utf8") === String(process.pid)) rmSync(LOCK, { recursive: true, force: true });
  } catch {
    // Not ours (taken over after a stall) or already gone: nothing to release.
  }
});
