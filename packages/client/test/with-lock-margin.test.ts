import { afterEach, describe, expect, it } from "vitest";
import { LockClient } from "../src/index.js";
import { captureLogger } from "./support/capture-logger.js";
import { FakeLockService } from "./support/fake-lock-service.js";

const clients: LockClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

function setup() {
  const service = new FakeLockService();
  const client = LockClient.embedded(service, { namespace: "ns", logger: captureLogger().logger });
  clients.push(client);
  return { service, client };
}

describe("withLock's leaseMarginMs is validated", () => {
  const bad: [string, unknown][] = [
    ["negative", -1],
    ["NaN", Number.NaN],
    ["Infinity", Number.POSITIVE_INFINITY],
    ["-Infinity", Number.NEGATIVE_INFINITY],
    ["a string", "100"],
    ["null", null],
  ];
  for (const [what, value] of bad) {
    it(`${what} rejects with INVALID_ARGUMENT naming the option, before any lock is taken`, async () => {
      const { service, client } = setup();
      let ran = false;
      const options = { leaseMarginMs: value as number };
      const result = client.withLock([{ descriptor: "d", mode: "exclusive" }], options, () => {
        ran = true;
      });
      await expect(result).rejects.toMatchObject({ code: "INVALID_ARGUMENT", details: { path: "leaseMarginMs" } });
      await expect(result).rejects.toThrow(/leaseMarginMs/);
      expect(ran).toBe(false);
      expect(service.lockCalls).toBe(0);
      expect(service.held.size).toBe(0);
    });
  }

  it("0 and positive margins are accepted", async () => {
    const { client } = setup();
    for (const leaseMarginMs of [0, 250.5]) {
      const result = await client.withLock([{ descriptor: `d-${leaseMarginMs}`, mode: "exclusive" }], { leaseMarginMs }, (signal) => signal.aborted);
      expect(result).toMatchObject({ status: "acquired", value: false });
    }
  });
});
