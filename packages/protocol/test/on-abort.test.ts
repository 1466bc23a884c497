import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { onAbort } from "../src/index.js";

describe("onAbort: one listener per signal, fanned out", () => {
  it("adds one listener for any number of callbacks, and removes it when the last one unsubscribes", () => {
    const controller = new AbortController();
    const offs = Array.from({ length: 50 }, () => onAbort(controller.signal, () => undefined));
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
    for (const off of offs.slice(1)) off();
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
    offs[0]!();
    offs[0]!(); // twice is harmless
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    // A later subscription listens again.
    let ran = 0;
    onAbort(controller.signal, () => ran++);
    controller.abort();
    expect(ran).toBe(1);
  });

  it("runs every subscribed callback once, in order, each registration of the same function separately", () => {
    const controller = new AbortController();
    const order: number[] = [];
    const same = (): void => void order.push(0);
    onAbort(controller.signal, same);
    onAbort(controller.signal, () => order.push(1));
    onAbort(controller.signal, same);
    const off = onAbort(controller.signal, () => order.push(3));
    off();
    controller.abort();
    controller.abort();
    expect(order).toEqual([0, 1, 0]);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("skips a callback unsubscribed by an earlier one during the abort, as a removed listener is", () => {
    const controller = new AbortController();
    const ran: string[] = [];
    let offB = (): void => undefined;
    onAbort(controller.signal, () => (ran.push("a"), offB()));
    offB = onAbort(controller.signal, () => ran.push("b"));
    onAbort(controller.signal, () => ran.push("c"));
    controller.abort();
    expect(ran).toEqual(["a", "c"]);
  });

  it("a throwing callback does not stop the others; its error is rethrown uncaught", async () => {
    const controller = new AbortController();
    const ran: string[] = [];
    const boom = new Error("boom");
    onAbort(controller.signal, () => {
      throw boom;
    });
    onAbort(controller.signal, () => ran.push("after"));
    const uncaught = new Promise<unknown>((resolve) => process.once("uncaughtException", resolve));
    controller.abort();
    expect(ran).toEqual(["after"]);
    expect(await uncaught).toBe(boom);
  });

  it("never calls back for a signal that had already aborted (callers check `aborted` first)", async () => {
    const signal = AbortSignal.abort();
    let ran = false;
    onAbort(signal, () => (ran = true));
    await new Promise((r) => setTimeout(r, 10));
    expect(ran).toBe(false);
  });

  it("keeps separate fan-outs per signal", () => {
    const a = new AbortController();
    const b = new AbortController();
    const ran: string[] = [];
    onAbort(a.signal, () => ran.push("a"));
    onAbort(b.signal, () => ran.push("b"));
    a.abort();
    expect(ran).toEqual(["a"]);
    expect(getEventListeners(b.signal, "abort")).toHaveLength(1);
  });
});
