import { describe, expect, it } from "vitest";
import { LeaderTerms } from "../src/leader-terms.js";

describe("LeaderTerms", () => {
  it("retires a shard's term when a newer view names another leaderId, once, and tells the listeners", () => {
    const terms = new LeaderTerms();
    const ended: string[] = [];
    terms.onVoid((id) => ended.push(id));
    terms.observe(3, "L1", 5);
    terms.observe(3, "L1", 5);
    terms.observe(4, "M1", 2); // another shard: independent
    expect(ended).toEqual([]);
    terms.observe(3, "L2", 6);
    expect(ended).toEqual(["L1"]);
    expect(terms.isVoid("L1")).toBe(true);
    expect(terms.isVoid("L2")).toBe(false);
    expect(terms.isVoid("M1")).toBe(false);
  });

  it("a view of an older epoch (a member cut off from PostgreSQL) never replaces a newer one, even naming an unseen leaderId", () => {
    const terms = new LeaderTerms();
    const ended: string[] = [];
    terms.onVoid((id) => ended.push(id));
    terms.observe(0, "live", 7);
    terms.observe(0, "stale", 6);
    terms.observe(0, "other", 7); // the same epoch names one term: a second name is not news
    expect(ended).toEqual([]);
    expect(terms.isVoid("live")).toBe(false);
    expect(terms.knows(0, "live")).toBe(true);
    // The stale view did not become current: the live term is still the one a newer view retires.
    terms.observe(0, "next", 8);
    expect(ended).toEqual(["live"]);
  });

  it("a hand-over keeps the leaderId: a newer epoch with the same term retires nothing", () => {
    const terms = new LeaderTerms();
    const ended: string[] = [];
    terms.onVoid((id) => ended.push(id));
    terms.observe(1, "T", 3);
    terms.observe(1, "T", 4);
    terms.observe(1, "U", 4); // not newer than the hand-over's view
    expect(ended).toEqual([]);
    terms.observe(1, "U", 5);
    expect(ended).toEqual(["T"]);
  });

  it("a late sighting of an ended term never brings it back, whatever its epoch", () => {
    const terms = new LeaderTerms();
    const ended: string[] = [];
    terms.onVoid((id) => ended.push(id));
    terms.observe(0, "L1", 1);
    terms.observe(0, "L2", 2);
    terms.observe(0, "L1", 3);
    expect(ended).toEqual(["L1"]);
    expect(terms.isVoid("L2")).toBe(false);
    terms.observe(0, "L3", 4);
    expect(ended).toEqual(["L1", "L2"]);
  });

  it("knows the current and the ended terms only (an unseen one means the map is behind)", () => {
    const terms = new LeaderTerms();
    terms.observe(2, "A", 1);
    terms.observe(2, "B", 2);
    expect(terms.knows(2, "A")).toBe(true);
    expect(terms.knows(2, "B")).toBe(true);
    expect(terms.knows(2, "C")).toBe(false);
    expect(terms.knows(3, "B")).toBe(false);
  });

  it("after the shard count changes, shard numbers start afresh (no term is retired by a renumbering)", () => {
    const terms = new LeaderTerms();
    terms.observe(0, "L1", 9);
    terms.resetShards();
    terms.observe(0, "M1", 1);
    expect(terms.isVoid("L1")).toBe(false);
  });
});
