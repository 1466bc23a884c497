import { describe, expect, it } from "vitest";
import { LeaderTerms } from "../src/leader-terms.js";

describe("LeaderTerms", () => {
  it("retires a shard's term when a newer one shows, once, and tells the listeners", () => {
    const terms = new LeaderTerms();
    const ended: string[] = [];
    terms.onVoid((id) => ended.push(id));
    terms.observe(3, "L1");
    terms.observe(3, "L1");
    terms.observe(4, "M1"); // another shard: independent
    expect(ended).toEqual([]);
    terms.observe(3, "L2");
    expect(ended).toEqual(["L1"]);
    expect(terms.isVoid("L1")).toBe(true);
    expect(terms.isVoid("L2")).toBe(false);
    expect(terms.isVoid("M1")).toBe(false);
  });

  it("a late sighting of an ended term (a deposed leader's answer, a lagging map) never brings it back", () => {
    const terms = new LeaderTerms();
    const ended: string[] = [];
    terms.onVoid((id) => ended.push(id));
    terms.observe(0, "L1");
    terms.observe(0, "L2");
    terms.observe(0, "L1");
    expect(ended).toEqual(["L1"]);
    expect(terms.isVoid("L2")).toBe(false);
    terms.observe(0, "L3");
    expect(ended).toEqual(["L1", "L2"]);
  });

  it("after the shard count changes, shard numbers start afresh (no term is retired by a renumbering)", () => {
    const terms = new LeaderTerms();
    terms.observe(0, "L1");
    terms.resetShards();
    terms.observe(0, "M1");
    expect(terms.isVoid("L1")).toBe(false);
  });
});
