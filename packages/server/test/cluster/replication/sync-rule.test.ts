import { describe, expect, it } from "vitest";
import { ReplicationLog } from "../../../src/cluster/replication/replication-log.js";
import { ReplicationFencedError, SyncRule, type AckOutcome } from "../../../src/cluster/replication/sync-rule.js";
import { FakeReplicationClock, settle } from "./fake-replication-clock.js";

const LATE_MS = 1_000;

/** The shard's row as PostgreSQL would hold it, with marks the test can hold in flight. */
class FakeRow {
  inSync = false;
  readonly writes: string[] = [];
  holdNext = false;
  failNext = 0;
  fenced = false;
  private held: (() => void) | null = null;
  mark(value: boolean): Promise<boolean> {
    this.writes.push(value ? "in_sync=true" : "in_sync=false");
    if (this.failNext > 0) {
      this.failNext--;
      return Promise.reject(new Error("statement timeout"));
    }
    const apply = (): boolean => {
      if (this.fenced) return false;
      this.inSync = value;
      return true;
    };
    if (!this.holdNext) return Promise.resolve(apply());
    this.holdNext = false;
    return new Promise((resolve) => {
      this.held = () => resolve(apply());
    });
  }
  /** Let the held statement commit. */
  async commit(): Promise<void> {
    const h = this.held;
    this.held = null;
    h?.();
    await settle();
  }
}

function setup(unsafeAnswerFirst = false) {
  const clock = new FakeReplicationClock();
  const log = new ReplicationLog(clock);
  const row = new FakeRow();
  const events: string[] = [];
  const rule = new SyncRule({
    log,
    clock,
    lateMs: LATE_MS,
    retryMs: 100,
    markInSync: () => row.mark(true),
    markNotInSync: () => row.mark(false),
    onOut: () => events.push("out"),
    onFenced: () => events.push("fenced"),
    onInSync: () => events.push("in-sync"),
    unsafeAnswerFirst,
  });
  return { clock, log, row, rule, events };
}

/** Bring the rule to in-sync through a snapshot at the log's position, acknowledged. */
async function inSync(s: ReturnType<typeof setup>): Promise<void> {
  const seq = s.log.startRetaining();
  s.rule.beginJoin(seq);
  s.rule.streamAcked(seq);
  await settle();
  expect(s.rule.state).toBe("in-sync");
  expect(s.row.inSync).toBe(true);
}

/**
 * The check of the rule: a grant is waited on with `whenAcked`; at the moment its answer is
 * released, what does the row say? Answers the row's `in_sync` at each release, and the outcomes.
 */
async function lateStandbyScenario(unsafeAnswerFirst: boolean): Promise<{ rowAtAnswer: boolean[]; outcomes: AckOutcome[]; s: ReturnType<typeof setup> }> {
  const s = setup(unsafeAnswerFirst);
  await inSync(s);
  const rowAtAnswer: boolean[] = [];
  const outcomes: AckOutcome[] = [];
  const grant = (seq: number): void => {
    void s.rule.whenAcked(seq).then((o) => {
      rowAtAnswer.push(s.row.inSync);
      outcomes.push(o);
    });
  };
  grant(s.log.append("grant 1"));
  await s.clock.endTurn();
  s.row.holdNext = true;
  await s.clock.advance(LATE_MS - 1);
  expect(s.row.writes).toEqual(["in_sync=true"]);
  expect(outcomes).toEqual([]);
  await s.clock.advance(1);
  // The standby is late: the not-in-sync write is in flight.
  expect(s.row.writes).toEqual(["in_sync=true", "in_sync=false"]);
  grant(s.log.append("grant 2"));
  await s.clock.endTurn();
  await settle();
  const beforeCommit = [...outcomes];
  await s.row.commit();
  await settle();
  expect(beforeCommit.length === 0 || unsafeAnswerFirst).toBe(true);
  return { rowAtAnswer, outcomes, s };
}

describe("SyncRule", () => {
  it("in sync, a grant is answered only after the standby acknowledged its entry", async () => {
    const s = setup();
    await inSync(s);
    const answered: AckOutcome[] = [];
    const seq = s.log.append("grant");
    void s.rule.whenAcked(seq).then((o) => answered.push(o));
    await s.clock.endTurn();
    await s.clock.advance(LATE_MS / 2);
    expect(answered).toEqual([]);
    s.log.acknowledge(seq);
    await settle();
    expect(answered).toEqual(["acked"]);
  });

  it("one hold per turn: grants appended in one turn share one wait, for the last of them; a grant already sent is not held behind this turn's", async () => {
    const s = setup();
    await inSync(s);
    const sent = s.log.append("grant 1");
    await s.clock.endTurn();
    const answered: string[] = [];
    const first = s.rule.whenAcked(sent);
    void first.then(() => answered.push("grant 1"));
    const a = s.log.append("grant 2");
    const waitA = s.rule.whenAcked(a);
    const b = s.log.append("grant 3");
    const waitB = s.rule.whenAcked(b);
    // Entries of the same turn share one wait; the wait for an entry already sent is its own.
    expect(waitB).toBe(waitA);
    expect(waitA).not.toBe(first);
    void waitA.then(() => answered.push("grants 2 and 3"));
    await s.clock.endTurn();
    s.log.acknowledge(sent);
    await settle();
    expect(answered).toEqual(["grant 1"]);
    // The shared wait is for the last entry of the turn: an acknowledgement of the first is not enough.
    s.log.acknowledge(a);
    await settle();
    expect(answered).toEqual(["grant 1"]);
    s.log.acknowledge(b);
    await settle();
    expect(answered).toEqual(["grant 1", "grants 2 and 3"]);
  });

  it("with no standby in sync (recorded), a grant is answered at once", async () => {
    const s = setup();
    expect(await s.rule.whenAcked(s.log.append("grant"))).toBe("unreplicated");
  });

  it("a late standby: the leader records in_sync = false first, and only then answers the waiting grants (the rule)", async () => {
    const { rowAtAnswer, outcomes, s } = await lateStandbyScenario(false);
    expect(outcomes).toEqual(["unreplicated", "unreplicated"]);
    expect(rowAtAnswer).toEqual([false, false]);
    expect(s.rule.state).toBe("out");
    expect(s.events).toEqual(["in-sync", "out"]);
    // Out of sync, the log keeps nothing and grants are answered at once.
    expect(s.log.lag().entries).toBe(0);
    expect(await s.rule.whenAcked(s.log.append("grant 3"))).toBe("unreplicated");
  });

  it("negative control: with the order reversed (answer, then record), the same check sees grants answered while the row still says in sync", async () => {
    const { rowAtAnswer } = await lateStandbyScenario(true);
    expect(rowAtAnswer).toContain(true);
  });

  it("a not-in-sync write whose outcome is unknown is retried, and the grants wait until one is recorded", async () => {
    const s = setup();
    await inSync(s);
    const answered: AckOutcome[] = [];
    void s.rule.whenAcked(s.log.append("grant")).then((o) => answered.push(o));
    await s.clock.endTurn();
    s.row.failNext = 2;
    await s.clock.advance(LATE_MS);
    expect(answered).toEqual([]);
    await s.clock.advance(100);
    expect(answered).toEqual([]);
    expect(s.row.inSync).toBe(true);
    await s.clock.advance(100);
    expect(s.row.writes).toEqual(["in_sync=true", "in_sync=false", "in_sync=false", "in_sync=false"]);
    expect(answered).toEqual(["unreplicated"]);
    expect(s.row.inSync).toBe(false);
  });

  it("a deposed leader's not-in-sync write matches nothing: its waiting grants are refused, never answered as granted", async () => {
    const s = setup();
    await inSync(s);
    const p = s.rule.whenAcked(s.log.append("grant"));
    p.catch(() => undefined);
    await s.clock.endTurn();
    s.row.fenced = true;
    await s.clock.advance(LATE_MS);
    await expect(p).rejects.toBeInstanceOf(ReplicationFencedError);
    expect(s.rule.state).toBe("fenced");
    expect(s.events).toEqual(["in-sync", "fenced"]);
    await expect(s.rule.whenAcked(s.log.append("after"))).rejects.toBeInstanceOf(ReplicationFencedError);
  });

  it("re-sync: in_sync = true is recorded only once the standby acknowledged the snapshot, and grants answered meanwhile waited for acknowledgements", async () => {
    const s = setup();
    for (let i = 0; i < 5; i++) s.log.append(`before ${i}`);
    await s.clock.endTurn();
    const snapshotSeq = s.log.startRetaining();
    s.rule.beginJoin(snapshotSeq);
    expect(s.rule.state).toBe("joining");
    const answered: AckOutcome[] = [];
    const seq = s.log.append("during join");
    void s.rule.whenAcked(seq).then((o) => answered.push(o));
    await s.clock.endTurn();
    expect(s.row.writes).toEqual([]);
    s.log.acknowledge(snapshotSeq);
    s.rule.streamAcked(snapshotSeq);
    await settle();
    // The snapshot is held: in sync is recorded; the grant still waits for its own entry.
    expect(s.row.writes).toEqual(["in_sync=true"]);
    expect(s.rule.state).toBe("in-sync");
    expect(answered).toEqual([]);
    s.log.acknowledge(seq);
    await settle();
    expect(answered).toEqual(["acked"]);
  });

  it("a new standby is never recorded in sync on the strength of what an earlier standby acknowledged", async () => {
    const s = setup();
    await inSync(s);
    for (let i = 0; i < 3; i++) s.log.append(`e${i}`);
    await s.clock.endTurn();
    s.log.acknowledge(3);
    await s.clock.advance(0);
    // The first standby is lost; nothing is appended afterwards, so the new snapshot is at 3, as far as the old acknowledgement.
    s.rule.standbyLost();
    await settle();
    expect(s.rule.state).toBe("out");
    const seq = s.log.startRetaining();
    expect(seq).toBe(s.log.ackedSeq);
    s.rule.beginJoin(seq);
    await s.clock.advance(LATE_MS / 2);
    expect(s.rule.state).toBe("joining");
    expect(s.row.inSync).toBe(false);
    s.rule.streamAcked(seq);
    await settle();
    expect(s.rule.state).toBe("in-sync");
  });

  it("late while the in-sync write is in flight: the not-in-sync write follows it and the rule ends out, not in sync", async () => {
    const s = setup();
    s.row.holdNext = true;
    const seq0 = s.log.startRetaining();
    s.rule.beginJoin(seq0);
    s.rule.streamAcked(seq0);
    const answered: AckOutcome[] = [];
    void s.rule.whenAcked(s.log.append("grant")).then((o) => answered.push(o));
    await s.clock.endTurn();
    await s.clock.advance(LATE_MS);
    expect(s.row.writes).toEqual(["in_sync=true", "in_sync=false"]);
    expect(answered).toEqual(["unreplicated"]);
    await s.row.commit();
    // The in-sync write's answer comes after: the rule does not believe it (in PostgreSQL the
    // later round of the not-in-sync write makes the earlier write match nothing).
    expect(s.rule.state).toBe("out");
  });

  it("close rejects every waiting grant with the close error", async () => {
    const s = setup();
    await inSync(s);
    const p = s.rule.whenAcked(s.log.append("grant"));
    s.rule.close(new Error("term ended"));
    await expect(p).rejects.toThrow("term ended");
    expect(s.clock.pendingTimers).toBe(0);
  });
});
