import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LockClient } from "../../src/index.js";
import { killLeftovers, LEASEHOLD_BIN, pidFilesIn, spawnNode, startServerCli, type ServerProcess } from "../cli/cli-support.js";
import { captureLogger } from "../support/capture-logger.js";
import { chromiumAvailability, launchChromium } from "./chromium.js";

const availability = chromiumAvailability();
if (!availability.run) {
  process.stderr.write(`status page browser test: ${availability.message}\n`);
  if (availability.fail) {
    describe("status page in Chromium", () => {
      it("needs Chromium in CI", () => {
        throw new Error(availability.message);
      });
    });
  }
}

/** Set LEASEHOLD_UI_SCREENSHOTS=1 to rewrite docs/img/status-page*.png from this run. */
const SCREENSHOTS = process.env.LEASEHOLD_UI_SCREENSHOTS === "1" ? fileURLToPath(new URL("../../../../docs/img/", import.meta.url)) : undefined;

describe.runIf(availability.run)("status page in Chromium, against the server CLI with real clients", { timeout: 120_000 }, () => {
  let server: ServerProcess;
  let browser: { context: BrowserContext; close(): Promise<void> };
  let page: Page;
  let dir: string;
  const clients: LockClient[] = [];
  const client = (): LockClient => {
    const c = LockClient.http({ baseUrl: server.url, namespace: "billing", logger: captureLogger().logger });
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "leasehold-ui-"));
    // A 3 s lease: a killed holder lapses within seconds, live ones refresh comfortably.
    server = await startServerCli(["--lease-ms", "3000", "--allow-admin-without-auth"]);
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.on("dialog", (dialog) => void dialog.accept("freeing invoice-17 (browser test)"));
    await page.goto(`${server.url}/ui#ns=billing`);
    await page.locator("#live.ok").waitFor({ timeout: 15_000 });
  });
  afterAll(async () => {
    killLeftovers(dir === undefined ? [] : pidFilesIn(dir));
    await Promise.all(clients.map((c) => c.close()));
    await browser?.close();
    await server?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  const holderRow = (descriptor: string) => page.locator(`#locks tr[data-descriptor="${descriptor}"][data-role="holder"]`);
  const waiterRow = (descriptor: string, position: number) => page.locator(`#locks tr[data-descriptor="${descriptor}"][data-role="waiter"][data-position="${position}"]`);

  it("shows a held lock with its description within a second of the grant", async () => {
    // The page notes (on the same machine's clock) the moment the row first appears in its DOM, so
    // the test's own round trips to the browser do not count against the page.
    await page.evaluate(SEEN_OBSERVER);
    const holder = client();
    const held = await holder.lock([{ descriptor: "invoice-17", mode: "exclusive" }], { clientDescription: "invoicer pid 4412 on host-3" });
    expect(held.status).toBe("acquired");
    const granted = Date.now();
    await holderRow("invoice-17").filter({ hasText: "invoicer pid 4412 on host-3" }).waitFor({ timeout: 5_000 });
    const seen = Number(await page.evaluate("window.__holderSeenAt"));
    expect(seen - granted).toBeLessThan(1_000);
    await expect(holderRow("invoice-17").locator("td").nth(2).textContent()).resolves.toBe("exclusive");
    await expect(page.locator('#namespaces tr[data-namespace="billing"] td').nth(1).textContent()).resolves.toBe("1");
  });

  it("shows waiters in queue order", async () => {
    const first = client().lock([{ descriptor: "invoice-17", mode: "exclusive" }], { acquireTimeoutMs: 60_000, clientDescription: "first waiter" });
    await waiterRow("invoice-17", 1).filter({ hasText: "first waiter" }).waitFor({ timeout: 5_000 });
    const second = client().lock([{ descriptor: "invoice-17", mode: "exclusive" }], { acquireTimeoutMs: 60_000, clientDescription: "second waiter" });
    await waiterRow("invoice-17", 2).filter({ hasText: "second waiter" }).waitFor({ timeout: 5_000 });
    await expect(waiterRow("invoice-17", 1).textContent()).resolves.toContain("first waiter");
    // Kept for the revoke test: the first waiter is the one a revoke must free. Until then a
    // failure elsewhere must not surface as an unhandled rejection.
    first.catch(() => undefined);
    second.catch(() => undefined);
    pending.first = first;
    pending.second = second;
  });

  const pending: { first?: ReturnType<LockClient["lock"]>; second?: ReturnType<LockClient["lock"]> } = {};

  it("shows the lapse of a holder whose process was killed", async () => {
    const pidFile = join(dir, "doomed.pid");
    const doomed = spawnNode(
      LEASEHOLD_BIN,
      ["lock", "report-9", "--description", "doomed worker on host-7", "--", "sh", "-c", 'echo $$ > "$1"; echo ready; while :; do sleep 0.05; done', "sh", pidFile],
      { LEASEHOLD_URL: server.url, LEASEHOLD_NAMESPACE: "billing" },
    );
    await doomed.waitForLine("ready");
    await holderRow("report-9").filter({ hasText: "doomed worker on host-7" }).waitFor({ timeout: 5_000 });
    const fingerprint = await holderRow("report-9").getAttribute("data-fingerprint");
    doomed.child.kill("SIGKILL");
    killLeftovers([pidFile]);
    // The lease (3 s) lapses without refreshes; the page lists it with who it was.
    const lapse = page.locator(`#events tr[data-kind="lapse"][data-fingerprint="${fingerprint}"]`);
    await lapse.waitFor({ timeout: 10_000 });
    await expect(lapse.textContent()).resolves.toContain("doomed worker on host-7");
    await holderRow("report-9").waitFor({ state: "detached", timeout: 5_000 });
  });

  it("shows which server leads which shard when the server answers GET /v1/cluster, and nothing otherwise", async () => {
    const res = await fetch(`${server.url}/v1/cluster`);
    if (res.status === 404) {
      // A server without cluster support: the section stays hidden (checked after a slow poll).
      await new Promise((r) => setTimeout(r, 5_500));
      expect(await page.locator("#cluster-section").isHidden()).toBe(true);
      return;
    }
    const cluster = (await res.json()) as { shards: number; leaders: { leaderUrl: string | null }[] };
    await page.locator("#cluster-section").waitFor({ state: "visible", timeout: 10_000 });
    await expect(page.locator("#cluster-summary").textContent()).resolves.toContain(`${cluster.shards} shard`);
    const leader = cluster.leaders[0]!.leaderUrl ?? "(no leader)";
    await expect(page.locator("#cluster tbody").textContent()).resolves.toContain(leader);
  });

  it("a revoke from the page frees the first waiter, and the revocation is listed", async () => {
    if (SCREENSHOTS !== undefined) await screenshots(page, server.url, SCREENSHOTS);
    const fingerprint = await holderRow("invoice-17").getAttribute("data-fingerprint");
    await holderRow("invoice-17").locator("button.revoke").click();
    const granted = await pending.first!;
    expect(granted.status).toBe("acquired");
    await holderRow("invoice-17").filter({ hasText: "first waiter" }).waitFor({ timeout: 5_000 });
    await waiterRow("invoice-17", 1).filter({ hasText: "second waiter" }).waitFor({ timeout: 5_000 });
    const revoked = page.locator(`#events tr[data-kind="revoke"][data-fingerprint="${fingerprint}"]`);
    await revoked.waitFor({ timeout: 5_000 });
    await expect(revoked.textContent()).resolves.toContain("freeing invoice-17 (browser test)");
    if (granted.status === "acquired") await clients[1]!.unlock([granted.token]);
    expect((await pending.second!).status).toBe("acquired");
  });
});

describe.runIf(availability.run)("status page with authentication", { timeout: 120_000 }, () => {
  let server: ServerProcess;
  let dir: string;
  const admin = "admin-token-0123456789abcdef";
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "leasehold-ui-auth-"));
    writeFileSync(join(dir, "auth.json"), JSON.stringify({ "@admin": [admin] }));
    server = await startServerCli(["--auth-file", join(dir, "auth.json")]);
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("asks for a bearer token, sends it, and keeps it in this tab only", async () => {
    const holder = LockClient.http({ baseUrl: server.url, namespace: "secure", logger: captureLogger().logger, headers: { authorization: `Bearer ${admin}` } });
    const browser = await launchChromium();
    try {
      await holder.lock([{ descriptor: "vault", mode: "exclusive" }], { clientDescription: "vault keeper" });
      const page = await browser.context.newPage();
      await page.goto(`${server.url}/ui#ns=secure`);
      await page.locator("#token-dialog[open]").waitFor({ timeout: 10_000 });
      await page.fill("#token-input", admin);
      await page.click('#token-form button[value="use"]');
      await page.locator('#locks tr[data-descriptor="vault"][data-role="holder"]').filter({ hasText: "vault keeper" }).waitFor({ timeout: 5_000 });
      expect(await page.evaluate('({ local: localStorage.length, session: sessionStorage.getItem("leasehold.bearerToken") })')).toEqual({ local: 0, session: admin });
      // A new tab of the same browser does not have it.
      const other = await browser.context.newPage();
      await other.goto(`${server.url}/ui`);
      expect(await other.evaluate('sessionStorage.getItem("leasehold.bearerToken")')).toBeNull();
    } finally {
      await holder.close();
      await browser.close();
    }
  });
});

/** Records in `window.__holderSeenAt` when the invoice-17 holder row first appears. */
const SEEN_OBSERVER = `new MutationObserver((_, observer) => {
  const row = document.querySelector('#locks tr[data-descriptor="invoice-17"][data-role="holder"]');
  if (row !== null && row.textContent.includes("invoicer pid 4412 on host-3")) {
    window.__holderSeenAt = Date.now();
    observer.disconnect();
  }
}).observe(document.body, { childList: true, subtree: true, characterData: true })`;

/** The docs' screenshots: the page with holders, waiters, a lapse and some traffic on the charts. */
async function screenshots(page: Page, url: string, out: string): Promise<void> {
  const traffic = LockClient.http({ baseUrl: url, namespace: "jobs", logger: captureLogger().logger });
  try {
    // Four workers contending for three jobs, each holding a few ms: grants and queueing waits.
    const worker = async (w: number): Promise<void> => {
      for (let i = 0; i < 150; i++) {
        const r = await traffic.lock([{ descriptor: `job-${i % 3}`, mode: "exclusive" }], { acquireTimeoutMs: 5_000, clientDescription: `importer ${w}` });
        if (r.status !== "acquired") continue;
        await new Promise((done) => setTimeout(done, 2 + (i % 5)));
        await traffic.unlock([r.token]);
      }
    };
    await Promise.all([0, 1, 2, 3].map(worker));
    await new Promise((r) => setTimeout(r, 2_500));
    mkdirSync(out, { recursive: true });
    await page.screenshot({ path: join(out, "status-page.png"), fullPage: true });
  } finally {
    await traffic.close();
  }
}
