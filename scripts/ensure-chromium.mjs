#!/usr/bin/env node
// Run by `pnpm test` before the build: the status page's browser test drives Debian's Chromium
// (/usr/bin/chromium, never Playwright's own browser download, which these machines cannot fetch).
// When it is missing, install it if this process may (root, or password-less sudo, with apt-get);
// otherwise say plainly that the browser test will be skipped (and fail under CI=true).
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

const CHROMIUM = "/usr/bin/chromium";
if (existsSync(CHROMIUM) || process.env.LEASEHOLD_SKIP_CHROMIUM_INSTALL === "1") process.exit(0);

const has = (cmd) => spawnSync("sh", ["-c", `command -v ${cmd}`], { stdio: "ignore" }).status === 0;
const root = typeof process.getuid === "function" && process.getuid() === 0;
const sudo = !root && has("sudo") && spawnSync("sudo", ["-n", "true"], { stdio: "ignore" }).status === 0;
if (!has("apt-get") || (!root && !sudo)) {
  console.warn(`leasehold: ${CHROMIUM} is missing and cannot be installed here (needs apt-get as root); the status page browser test will be skipped (CI=true makes it fail). Install it with: apt-get install -y chromium`);
  process.exit(0);
}
const run = (args) => execFileSync(root ? args[0] : "sudo", root ? args.slice(1) : args, { stdio: "inherit" });
console.log(`leasehold: installing Debian's chromium for the status page browser test (${CHROMIUM} is missing)`);
try {
  run(["apt-get", "update"]);
  run(["apt-get", "install", "-y", "--no-install-recommends", "chromium"]);
} catch (err) {
  console.warn(`leasehold: installing chromium failed (${err instanceof Error ? err.message : String(err)}); the browser test will be skipped (CI=true makes it fail)`);
}
