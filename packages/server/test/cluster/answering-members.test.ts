import { describe, expect, it } from "vitest";
import { AnsweringMembers } from "../../src/cluster/answering-members.js";
import type { LiveMember } from "../../src/cluster/coordinator.js";
import type { ProbeResult } from "../../src/cluster/health-prober.js";

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** AnsweringMembers over a fake clock and probes answered by the test. */
function setup() {
  let now = 0;
  const pending: { serverId: string; answer: (r: ProbeResult) => void }[] = [];
  const members = new AnsweringMembers({
    serverId: "a",
    probe: (serverId) => new Promise<ProbeResult>((answer) => pending.push({ serverId, answer })),
    freshMs: 1_500,
    clock: () => now,
  });
  const b: LiveMember = { serverId: "b", ready: true, incarnation: "b-1", url: "http://b" };
  /** Answer b's probe in flight with `answering`. */
  const answer = async (answering: boolean): Promise<void> => {
    const probe = pending.splice(pending.findIndex((p) => p.serverId === "b"), 1)[0]!;
    probe.answer(answering ? { answering } : { answering, problem: "connection refused" });
    await settle();
  };
  return { members, b, pending, answer, at: (t: number) => (now = t) };
}

describe("AnsweringMembers: a listed member is a balance target only while it answers", () => {
  it("answers from its probe's good answer, for a leader lease; a refused probe after it ends that at once", async () => {
    const s = setup();
    expect(s.members.answering(s.b, []), "never probed").toBe(false);
    s.members.observe([{ serverId: "a", ready: true }, s.b]);
    expect(s.pending.map((p) => p.serverId)).toEqual(["b"]);
    // One probe in flight per member.
    s.members.observe([s.b]);
    expect(s.pending).toHaveLength(1);
    await s.answer(true);
    expect(s.members.answering(s.b, [])).toBe(true);
    s.at(1_500);
    expect(s.members.answering(s.b, [])).toBe(true);
    s.at(1_501);
    expect(s.members.answering(s.b, []), "the last good answer is older than a leader lease").toBe(false);
    // Probed again: good, then (killed) refused.
    s.members.observe([s.b]);
    await s.answer(true);
    expect(s.members.answering(s.b, [])).toBe(true);
    s.at(1_600);
    s.members.observe([s.b]);
    await s.answer(false);
    expect(s.members.answering(s.b, []), "its heartbeat row is fresh, but it refused the probe").toBe(false);
  });

  it("a member whose own terms lapse is sick, not ready; a dead predecessor's expired rows do not count against it", async () => {
    const s = setup();
    s.members.observe([s.b]);
    await s.answer(true);
    expect(s.members.answering(s.b, [{ holder: "b", incarnation: "b-1", expired: false }])).toBe(true);
    expect(s.members.answering(s.b, [{ holder: "b", incarnation: "b-1", expired: true }])).toBe(false);
    expect(s.members.answering(s.b, [{ holder: "b", incarnation: "b-0", expired: true }])).toBe(true);
  });

  it("a member in its join wait is not probed (it takes no shard and counts in no share)", () => {
    const s = setup();
    s.members.observe([{ ...s.b, ready: false }]);
    expect(s.pending).toHaveLength(0);
  });

  it("this server, and a member of a list without URLs, always answer", () => {
    const s = setup();
    expect(s.members.answering({ serverId: "a", ready: true, url: "http://a" }, [])).toBe(true);
    expect(s.members.answering({ serverId: "c", ready: true }, [])).toBe(true);
  });
});
