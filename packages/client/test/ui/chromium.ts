import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";

/** Debian's Chromium (`apt-get install chromium`); Playwright's own browser download is never used. */
export const CHROMIUM = "/usr/bin/chromium";

/** Flags for a quiet, sandbox-free headless run that fetches nothing on its own. */
export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
] as const;

/**
 * Whether the browser tests run here: yes when Chromium is installed. Without it they are skipped
 * with a message locally, but in CI (`CI=true`) a missing Chromium is a failure: `.ci/run`
 * installs it, so its absence there means the pipeline is broken.
 */
export function chromiumAvailability(): { readonly run: true } | { readonly run: false; readonly fail: boolean; readonly message: string } {
  if (existsSync(CHROMIUM)) return { run: true };
  const inCi = process.env.CI === "true" || process.env.CI === "1";
  return {
    run: false,
    fail: inCi,
    message: `${CHROMIUM} is not installed (apt-get install -y chromium); ${inCi ? "CI must run the browser tests" : "skipping the status page browser tests"}`,
  };
}

/** A Chromium with a new, empty profile directory, removed again on close. */
export async function launchChromium(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), "leasehold-chromium-"));
  // A persistent context is how Playwright takes --user-data-dir: a fresh empty one per run.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [...CHROMIUM_FLAGS],
    viewport: { width: 1400, height: 900 },
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
