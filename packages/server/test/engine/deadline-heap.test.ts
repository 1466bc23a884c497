import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DeadlineHeap, type DeadlineItem } from "../../src/engine/deadline-heap.js";

describe("DeadlineHeap", () => {
  it("pops in deadline order (equal deadlines by serial) after arbitrary pushes, removals and deadline changes", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 1_000 }), { maxLength: 200 }),
        fc.array(fc.nat(), { maxLength: 50 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 1_000 })), { maxLength: 50 }),
        (deadlines, removals, changes) => {
          const heap = new DeadlineHeap<DeadlineItem>();
          const items = deadlines.map((deadline, waitSerial) => ({ deadline, heapIndex: -1, waitSerial }));
          for (const item of items) heap.push(item);
          const live = new Set(items);
          for (const r of removals) {
            if (items.length === 0) break;
            const item = items[r % items.length]!;
            heap.remove(item);
            live.delete(item);
          }
          for (const [i, deadline] of changes) {
            if (items.length === 0) break;
            const item = items[i % items.length]!;
            item.deadline = deadline;
            heap.update(item);
          }
          const popped: [number, number][] = [];
          for (let item = heap.pop(); item !== undefined; item = heap.pop()) {
            expect(live.has(item)).toBe(true);
            expect(item.heapIndex).toBe(-1);
            popped.push([item.deadline, item.waitSerial]);
          }
          expect(popped).toHaveLength(live.size);
          expect(popped).toEqual([...popped].sort((a, b) => a[0] - b[0] || a[1] - b[1]));
        },
      ),
    );
  });
});
