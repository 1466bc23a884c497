import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LockClient, type LockResponse } from "@leasehold/client";
import { ScriptChild } from "./script-child.js";
import { probeAgent, waitForMetrics } from "./http-probe.js";
import type { LockHolderEvent } from "./lock-holder-protocol.js";
import { SeededRandom } from "../seeded-random.js";
import { ServerProcess } from "./server-process.js";
import { Violations } from "../violations.js";
import { settleWithin } from "../settle-within.js";

/** Sizes of the client-SIGKILL scenario. */
export interface ClientKillOptions {
  /** Child processes killed, one after another. */
  readonly rounds: number;
  /** Descriptors each child locks (one exclusive lock request each); two waiters queue on each. */
  readonly descriptorsPerChild: number;
  /** The server's `--lease-ms`. */
  readonly leaseMs: number;
  /** How much later than the lease a waiter may be granted after the kill (the server's reaping timer, delivery). */
  readonly reapMarginMs: number;
  /** Seed of the kill timing. */
  readonly seed: number;
}

/** What the scenario measured. */
export interface ClientKillResult {
  /** Options it ran with. */
  readonly options: ClientKillOptions;
  /** Every broken check. */
  readonly violations: Violations;
  /** Children SIGKILLed. */
  readonly kills: number;
  /** For each descriptor a killed child held: ms from SIGKILL to the first waiter's grant. */
  readonly killToGrantMs: readonly number[];
  /** How long the children held their locks (with waiters queued) before the kill, ms. */
  readonly heldBeforeKillMs: readonly number[];
  /** Client operations: the children's locks, the waiters' locks and unlocks. */
  readonly operations: number;
  /** Wall-clock seconds. */
  readonly seconds: number;
}

interface Waiter {
  readonly descriptor: string;
  readonly rank: number;
  readonly answer: Promise<LockResponse>;
  grantedAt: number | undefined;
}

/**
 * Client SIGKILL: a child process takes exclusive locks and keeps them alive with its refresher;
 * waiters in this process queue behind it (two per descriptor); after holding for over two leases
 * (so only refreshes can have kept the locks) the child is SIGKILLed. Checked per descriptor: no
 * waiter is granted before the kill; the first waiter is granted within the lease plus
 * `reapMarginMs` of the kill; the second after the first releases, in queue order; fencing tokens
 * grow from the dead holder to each waiter; the child never lost a lock while alive.
 */
export async function runClientKillScenario(options: ClientKillOptions): Promise<ClientKillResult> {
  const began = performance.now();
  const violations = new Violations();
  const random = new SeededRandom(options.seed);
  const dataDir = await mkdtemp(join(tmpdir(), "leasehold-client-kill-"));
  const server = await ServerProcess.start({ dataDir, leaseMs: options.leaseMs });
  const agent = probeAgent();
  const waiterClients = [0, 1].map(() => LockClient.http({ baseUrl: server.url, namespace: "client-kill" }));
  const killToGrantMs: number[] = [];
  const heldBeforeKillMs: number[] = [];
  let operations = 0;
  let kills = 0;
  const children: ScriptChild<LockHolderEvent>[] = [];
  try {
    for (let round = 0; round < options.rounds; round++) {
      const descriptors = Array.from({ length: options.descriptorsPerChild }, (_, i) => `round-${round}-resource-${i}`);
      const child = new ScriptChild<LockHolderEvent>("lock-holder-child", { baseUrl: server.url, namespace: "client-kill", descriptors });
      children.push(child);
      const held = await child.next("held", 15_000);
      operations += descriptors.length;
      const childFence = new Map(held.locks.map((l) => [l.descriptor, l.fencingToken] as const));

      // Queue the waiters rank by rank, each rank known queued before the next is sent.
      const waiters: Waiter[] = [];
      for (const [rank, client] of waiterClients.entries()) {
        for (const descriptor of descriptors) {
          const waiter: Waiter = {
            descriptor,
            rank,
            answer: client.lock([{ descriptor, mode: "exclusive" }], { acquireTimeoutMs: 60_000 }),
            grantedAt: undefined,
          };
          void waiter.answer.then(
            () => (waiter.grantedAt = performance.now()),
            () => undefined,
          );
          waiters.push(waiter);
        }
        const queued = await waitForMetrics(server.url, agent, (m) => m.get("leasehold_waiting_requests") === (rank + 1) * descriptors.length, 10_000);
        if (!queued) throw new Error("the waiters were not queued within 10 s");
      }
      operations += waiters.length;

      // Hold past two leases: only the child's refresher can be keeping the locks.
      const holdMs = 2 * options.leaseMs + random.int(0, options.leaseMs / 2);
      const heldSince = performance.now();
      await new Promise((r) => setTimeout(r, holdMs));
      const killedAt = performance.now();
      heldBeforeKillMs.push(killedAt - heldSince);
      for (const w of waiters) {
        violations.expect(w.grantedAt === undefined, "no-grant-before-kill", () => `${w.descriptor}: waiter ${w.rank} was granted while the holder was alive`);
      }
      const exit = await child.kill();
      kills++;
      violations.expect(exit === "SIGKILL", "child-killed", () => `the holder child exited with ${exit}, not by SIGKILL`);
      const lostEvents = child.events.filter((e) => e.event === "lost");
      violations.expect(lostEvents.length === 0, "holder-kept-its-locks", () => `the holder child lost ${lostEvents.length} locks while alive`);

      const bound = options.leaseMs + options.reapMarginMs;
      for (const descriptor of descriptors) {
        const [first, second] = waiters.filter((w) => w.descriptor === descriptor).sort((a, b) => a.rank - b.rank) as [Waiter, Waiter];
        const firstSettled = (await settleWithin(first.answer, bound + 10_000)).settled;
        const answer = firstSettled ? await first.answer.catch(() => undefined) : undefined;
        if (answer?.status !== "acquired" || first.grantedAt === undefined) {
          violations.add("waiters-proceed", `${descriptor}: the first waiter was not granted after the kill`);
          continue;
        }
        const latency = first.grantedAt - killedAt;
        killToGrantMs.push(latency);
        violations.expect(latency > 0, "no-grant-before-kill", () => `${descriptor}: granted ${latency.toFixed(0)} ms before the kill`);
        violations.expect(latency <= bound, "grant-within-lease", () => `${descriptor}: granted ${latency.toFixed(0)} ms after the kill (bound ${bound} ms)`);
        violations.expect(second.grantedAt === undefined, "fifo", () => `${descriptor}: the second waiter was granted before the first released`);
        const fence = answer.acquired[0]?.fencingToken ?? -1;
        violations.expect(fence > (childFence.get(descriptor) ?? Infinity), "fencing-grows", () => `${descriptor}: waiter's fencing token ${fence} is not above the dead holder's`);
        await waiterClients[0]!.unlock([answer.token]);
        operations++;
        const secondOutcome = await settleWithin(second.answer, 10_000);
        const secondAnswer = secondOutcome.settled && secondOutcome.ok ? secondOutcome.value : undefined;
        if (secondAnswer?.status !== "acquired") {
          violations.add("waiters-proceed", `${descriptor}: the second waiter was not granted after the first released`);
          continue;
        }
        const secondFence = secondAnswer.acquired[0]?.fencingToken ?? -1;
        violations.expect(secondFence > fence, "fencing-grows", () => `${descriptor}: second waiter's fencing token ${secondFence} is not above the first's ${fence}`);
        await waiterClients[1]!.unlock([secondAnswer.token]);
        operations++;
      }
    }
    const released = await waitForMetrics(server.url, agent, (m) => m.get("leasehold_held_tokens") === 0 && m.get("leasehold_waiting_requests") === 0, 5_000);
    violations.expect(released, "all-released", () => "locks were still held or waiting after the last round");
    for (const line of server.errors()) violations.add("no-server-errors", `the server logged: ${String(line.msg)}`);
    return {
      options,
      violations,
      kills,
      killToGrantMs,
      heldBeforeKillMs,
      operations,
      seconds: (performance.now() - began) / 1000,
    };
  } finally {
    await Promise.all(children.map((c) => c.kill()));
    await settleWithin(Promise.all(waiterClients.map((c) => c.close())), 15_000);
    agent.destroy();
    await server.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}
