import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { SOAK, WRITE_REPORT, sized } from "../../src/report/index.js";
import { SEED } from "../bad-input/support/runs.js";
import { runBindingCheck, BINDING_CHECK } from "./support/binding.js";
import { startCliServer, type CliServer } from "../../src/cli-server.js";
import { CLIENT_CHECK, runClientWorkload, type Workload } from "./support/client-workload.js";
import { CONNECTION_CHECK, runConnectionLimit } from "./support/connection-limit.js";
import { authTable, makeSecrets } from "./support/credentials.js";
import { Harness } from "./support/harness.js";
import { RATE_CHECK, runRateFlood } from "./support/rate-flood.js";
import { runRefusedCredentials, STATE_CHECK } from "./support/refused-credentials.js";
import { SecurityTally } from "./support/security-tally.js";
import { checkTokenLeaks, LEAK_CHECK } from "./support/token-leaks.js";
import { runValidCredentials, VALID_CHECK } from "./support/valid-credentials.js";
import { runWaitingLimit, WAITING_CHECK } from "./support/waiting-limit.js";
import { writeSecuritySection, type SecurityLimits } from "./support/write-security-section.js";

/** The server's limits: small enough to reach from a test, large enough for the ordinary traffic beside them. */
const LIMITS: SecurityLimits = { maxConnections: 24, maxWaitingPerNamespace: 6, rateLimit: 50, leaseMs: 4_000 };

/** Sizes: quick (CI) and soak. */
const SIZES = {
  clientRounds: sized(9, 90),
  refused: sized(150, 3_000),
  valid: sized(60, 1_000),
  flood: sized(8 * LIMITS.rateLimit, 40 * LIMITS.rateLimit),
  overWaiting: sized(30, 500),
  overConnections: sized(30, 400),
};

describe(`security of a real CLI server (${SOAK ? "soak" : "quick"} mode)`, () => {
  const tally = new SecurityTally();
  const secrets = makeSecrets();
  const presented = new Set<string>();
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), "leasehold-security-"));
  let server: CliServer;
  let h: Harness;
  let workload: Workload | undefined;

  beforeAll(async () => {
    const authFile = join(dir, "auth.json");
    writeFileSync(authFile, JSON.stringify(authTable(secrets)), { mode: 0o600 });
    server = await startCliServer([
      "--port", "0",
      "--auth-file", authFile,
      "--max-connections", String(LIMITS.maxConnections),
      "--max-waiting-per-namespace", String(LIMITS.maxWaitingPerNamespace),
      "--rate-limit", String(LIMITS.rateLimit),
      "--lease-ms", String(LIMITS.leaseMs),
      "--log-level", "debug",
    ]);
    h = new Harness(server, secrets, tally);
  });

  afterAll(async () => {
    await Promise.all((workload?.clients ?? []).map((c) => c.close()));
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
    tally.countUnfinished();
    if (WRITE_REPORT) writeSecuritySection({ mode: SOAK ? "soak" : "quick", seconds: (performance.now() - started) / 1000, tally, limits: LIMITS });
  });

  it("binds 127.0.0.1 by default: nothing listens on the machine's other addresses", async () => {
    await tally.guard(BINDING_CHECK, () => runBindingCheck(h));
  });

  it(`LockClient.http with bearer tokens: ${SIZES.clientRounds} rounds of every call succeed`, async () => {
    await tally.guard(CLIENT_CHECK, async () => {
      workload = await runClientWorkload(h, SIZES.clientRounds);
    });
  }, sized(30_000, 120_000));

  it(`${SIZES.refused} generated refused credentials: one byte-identical 401 whatever the namespace, and nothing changes`, async () => {
    await tally.guard(STATE_CHECK, async () => {
      if (workload === undefined) throw new Error("the client workload did not run: no held lock in billing");
      await runRefusedCredentials({ harness: h, held: workload, numRuns: SIZES.refused, seed: SEED, presented });
    });
  }, sized(60_000, 600_000));

  it(`${SIZES.valid} generated requests with valid tokens are served`, async () => {
    await tally.guard(VALID_CHECK, () => runValidCredentials(h, SIZES.valid, SEED));
  }, sized(30_000, 300_000));

  it(`a flood of ${SIZES.flood} requests from one address gets 429 beyond the rate limit`, async () => {
    await tally.guard(RATE_CHECK, () => runRateFlood(h, LIMITS.rateLimit, SIZES.flood, SEED));
  }, sized(30_000, 300_000));

  it(`${SIZES.overWaiting} generated requests beyond the waiting limit get 429 and queue nothing`, async () => {
    await tally.guard(WAITING_CHECK, () => runWaitingLimit(h, LIMITS.maxWaitingPerNamespace, SIZES.overWaiting, SEED));
  }, sized(30_000, 300_000));

  it(`${SIZES.overConnections} generated requests beyond the connection limit get 503 and a close`, async () => {
    await tally.guard(CONNECTION_CHECK, async () => {
      // The clients' keep-alive connections would take slots: close them (their held lock then lapses).
      await Promise.all((workload?.clients ?? []).map((c) => c.close()));
      await runConnectionLimit(h, LIMITS.maxConnections, SIZES.overConnections, SEED);
    });
  }, sized(60_000, 300_000));

  it("no lock token or bearer token in the server's logs, its metrics or the clients' logs", async () => {
    await tally.guard(LEAK_CHECK, () => checkTokenLeaks({ harness: h, clientLogs: workload?.logs ?? [], presented }));
  }, 30_000);
});
