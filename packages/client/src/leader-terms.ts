/** Most ended terms remembered: a few per failover is the usual count, so this is years of them. */
const MAX_RETIRED = 1_024;

/** One shard's term as the newest view showed it. */
interface Term {
  readonly leaderId: string;
  readonly epoch: number;
}

/**
 * Which `leaderId` is current for each shard, as this client has seen it, and which ones have
 * ended. A `leaderId` names one term of one shard's leadership (PROTOCOL.md "Cluster mode").
 *
 * Terms are ordered only by the shard map's `epoch` (`GET /v1/cluster`): a view of a shard
 * replaces the known one only when its epoch is higher, so a member cut off from PostgreSQL, still
 * answering from its last view, never retires the term of the live leader. A term ends when a
 * view with a higher epoch names another `leaderId` (a hand-over keeps the `leaderId`, and the
 * epoch alone moves on). A term already known to have ended never becomes current again. Answers
 * that carry a lease have no epoch: they can only show that a term exists ({@link knows}), never
 * end one. Leader ids are opaque and never compared otherwise.
 *
 * An ended term is a reason to ask, not a verdict: the listeners ({@link onVoid}) refresh the
 * term's tokens at once, and only the refresh answer (or the lease running out) says a token is
 * lost (PROTOCOL.md "Leader ids").
 */
export class LeaderTerms {
  readonly #current = new Map<number, Term>();
  readonly #retired = new Set<string>();
  readonly #listeners = new Set<(leaderId: string) => void>();

  /**
   * Note that the shard map shows `leaderId` leading `shard` at `epoch`. A view not newer than the
   * known one changes nothing; a newer one naming another `leaderId` retires the earlier term and
   * tells the listeners.
   */
  observe(shard: number, leaderId: string, epoch: number): void {
    const current = this.#current.get(shard);
    if ((current !== undefined && epoch <= current.epoch) || this.#retired.has(leaderId)) return;
    this.#current.set(shard, { leaderId, epoch });
    if (current === undefined || current.leaderId === leaderId) return;
    this.#retired.add(current.leaderId);
    if (this.#retired.size > MAX_RETIRED) this.#retired.delete(this.#retired.values().next().value!);
    for (const listener of this.#listeners) listener(current.leaderId);
  }

  /**
   * True when `leaderId` is `shard`'s current term or one known to have ended. An answer with a
   * lease of any other term shows a change the map has not: the caller asks for the map again.
   */
  knows(shard: number, leaderId: string): boolean {
    return this.#current.get(shard)?.leaderId === leaderId || this.#retired.has(leaderId);
  }

  /** Forget which term is current per shard (the shard count changed, so shard numbers mean other things). */
  resetShards(): void {
    this.#current.clear();
  }

  /** True once `leaderId`'s term is known to have ended. */
  isVoid(leaderId: string): boolean {
    return this.#retired.size > 0 && this.#retired.has(leaderId);
  }

  /** Call `listener` with each term that ends from now on; returns the unsubscribe function. */
  onVoid(listener: (leaderId: string) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
