import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Exchange } from "./exchange-log.js";
import type { KeptHold } from "./lock-keepers.js";

/** A probe that was granted a held descriptor, with the exchanges of its call. */
export interface ProbeGrant {
  readonly key: string;
  /** Sent and granted, on the recorder's clock. */
  readonly sentAt: number;
  readonly grantedAt: number;
  /** The server whose answer granted it (the call's last `200`), `?` when not recorded. */
  readonly by: string;
  readonly leaderId: string;
  readonly fencingToken: string;
  /** The lock call's exchanges (the last 200 is the server that granted). */
  readonly exchanges: readonly Exchange[];
}

/** What a failing run leaves behind for a post-mortem. */
export interface FailureEvidence {
  readonly scenario: string;
  readonly seed: number;
  /** The violations, as the test prints them. */
  readonly violations: string;
  /**
   * The recorder's clock and the wall clock read together when the evidence was taken: a recorder
   * time `t` is near the wall time `wallNow − (recorderNow − t)` (server log lines' `time`).
   */
  readonly recorderNow: number;
  readonly wallNow: number;
  /** Each member's log lines (every incarnation), by member index. */
  readonly members: readonly { readonly index: number; readonly url: string; readonly serverId: string | undefined; readonly lines: readonly Record<string, unknown>[] }[];
  readonly holds: readonly KeptHold[];
  readonly probeGrants: readonly ProbeGrant[];
  /** Every exchange of the keepers and probers. */
  readonly exchanges: readonly Exchange[];
  /** Anything else the scenario knows (kills, failures). */
  readonly extra?: unknown;
}

/**
 * Write `evidence` as JSON to a new file under the system's temporary directory and answer its
 * path: called only when a run found a violation, so the members' logs and the clients' view of
 * each exchange survive the run that dropped them.
 */
export function writeFailureEvidence(evidence: FailureEvidence): string {
  const path = join(tmpdir(), `leasehold-${evidence.scenario}-${evidence.seed}-${Date.now()}.json`);
  writeFileSync(path, JSON.stringify(evidence, null, 1));
  return path;
}
