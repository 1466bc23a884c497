import { MemoryStore, type MemoryStoreOptions } from "@leasehold/server/internal";
import type { Violation } from "./sim-history.js";

/** A term as the store's bound statements name it. */
interface BoundTerm {
  readonly shard: number;
  readonly epoch: number;
}

/**
 * The in-memory database with one check on top, read from the store itself: no bound write (an
 * extension or a load) of a term commits once its shard's row has moved on to a newer epoch
 * (DESIGN.md "Bounds fenced by epoch": a deposed leader's extension matches nothing). The epoch
 * fence is the backstop for a failed serving gate; the reliability suite's control checks the
 * same from the servers' commit logs (`check-bound-extensions.ts`). The first breach of each
 * shard is reported to `onBreach`.
 */
export class FenceCheckedStore extends MemoryStore {
  private readonly breached = new Set<number>();

  constructor(
    options: MemoryStoreOptions,
    private readonly onBreach: (v: Violation) => void,
  ) {
    super(options);
  }

  override extendBound(namespace: string, term: BoundTerm, from: number, to: number, immutable: number | undefined, unfenced = false): boolean {
    const committed = super.extendBound(namespace, term, from, to, immutable, unfenced);
    if (committed) this.check(`extension of ${namespace} to ${to}`, term);
    return committed;
  }

  override loadBounds(term: BoundTerm, namespaces: readonly string[], block: number, unfenced = false): ReturnType<MemoryStore["loadBounds"]> {
    const loaded = super.loadBounds(term, namespaces, block, unfenced);
    if (loaded.length > 0) this.check(`load of ${loaded.map((b) => b.namespace).join(", ")}`, term);
    return loaded;
  }

  private check(what: string, term: BoundTerm): void {
    const row = this.readLeases()[term.shard];
    if (row === undefined || row.epoch <= term.epoch || this.breached.has(term.shard)) return;
    this.breached.add(term.shard);
    this.onBreach({ invariant: "bound-fence", detail: `shard ${term.shard}: a bound ${what} under epoch ${term.epoch} committed while the row is at epoch ${row.epoch} (held by ${row.holder ?? "nobody"})` });
  }
}
