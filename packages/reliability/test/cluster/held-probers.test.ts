/**
 * The repeated-crash scenario's probers, against one in-process server: a probe of a held `k` is
 * refused, and a real second holder (the server gives `k` away while its keeper still holds it)
 * is caught and described as one. The scenario starts the probers only once every keeper holds
 * `k`: started with the keepers on a loaded machine, a probe came before a keeper's first grant,
 * found `k` free and was counted a second holder (fencing token 1, no overlap, no lapse: the
 * keeper's lock then granted behind it under the same leaderId).
 */
import { LockClient } from "@leasehold/client";
import { startServer, type RunningServer } from "@leasehold/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeProbeGrant, startHeldProbers } from "../../src/cluster/held-probers.js";
import { ExchangeLog } from "../../src/cluster/exchange-log.js";
import type { ProbeGrant } from "../../src/cluster/failure-evidence.js";
import type { KeptHold } from "../../src/cluster/lock-keepers.js";
import { HistoryRecorder } from "../../src/history/index.js";

const hold = (over: Partial<KeptHold>): KeptHold => ({ holder: "k0", key: "ns/k", grantedAt: 100, lastRefreshedAt: 100, endedAt: undefined, end: "running", refreshes: [], ...over });
const grant = (over: Partial<ProbeGrant>): ProbeGrant => ({ key: "ns/k", sentAt: 490, grantedAt: 500, by: "http://s", leaderId: "L", fencingToken: "2", exchanges: [], ...over });

async function until(done: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!done()) {
    if (performance.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("held probers", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ leaseMs: 60_000 });
  });
  afterAll(async () => {
    await server.close();
  });

  it("are refused while the keeper holds k, and catch the server giving k away under it, naming the server", async () => {
    const keeper = LockClient.http({ baseUrl: server.url, namespace: "probed" });
    const thief = LockClient.http({ baseUrl: server.url, namespace: "probed" });
    const recorder = new HistoryRecorder();
    const exchanges = new ExchangeLog(() => recorder.now());
    const held = await keeper.lock([{ descriptor: "k", mode: "exclusive" }]);
    if (held.status !== "acquired") throw new Error("the keeper's lock was not granted");
    const ledger = [hold({ key: "probed/k", grantedAt: recorder.now() })];
    const probers = startHeldProbers({ baseUrls: [server.url], namespaces: ["probed"], everyMs: 10, requestTimeoutMs: 1_000, recorder, exchanges });
    try {
      await until(() => probers.calls.probes >= 5);
      expect(probers.granted).toEqual([]);
      // The server lets go of the keeper's lock behind its back: the keeper's ledger still says held.
      await thief.unlock([held.token]);
      await until(() => probers.granted.length > 0);
    } finally {
      await probers.stop();
      await Promise.all([keeper.close(), thief.close(), exchanges.close()]);
    }
    const caught = probers.granted[0]!;
    expect(caught.by).toBe(server.url);
    expect(caught.exchanges.some((e) => e.origin === server.url && e.status === 200 && e.path.endsWith("/lock"))).toBe(true);
    expect(describeProbeGrant(caught, ledger)).toMatch(new RegExp(`^probed/k granted to a probe at \\d+ ms by ${server.url} .* while hold k0 ran`));
  });

  it("describe a grant by what the keepers' ledger says of k then", () => {
    expect(describeProbeGrant(grant({}), [hold({})])).toContain("while hold k0 ran (granted at 100 ms");
    expect(describeProbeGrant(grant({}), [hold({ end: "lapsed", endedAt: 400 })])).toContain("with no hold running: k0 ended lapsed at 400 ms");
    // Ended (and unlocked by its keeper) while the probe's call was in flight: not known to overlap.
    expect(describeProbeGrant(grant({}), [hold({ end: "lapsed", endedAt: 491 })])).toContain("as hold k0 ended lapsed at 491 ms (its unlock sent then), while the probe's call was in flight");
    expect(describeProbeGrant(grant({}), [hold({ end: "lapsed", endedAt: 500 })])).toContain("while hold k0 ran");
    expect(describeProbeGrant(grant({ grantedAt: 50, sentAt: 40 }), [hold({})])).toContain("before any keeper was granted it");
    // A hold granted while the probe's call was in flight ran beside the probe's grant.
    expect(describeProbeGrant(grant({}), [hold({ grantedAt: 495 })])).toContain("while hold k0 ran");
  });
});
