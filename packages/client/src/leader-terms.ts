/** Most ended terms remembered: a few per failover is the usual count, so this is years of them. */
const MAX_RETIRED = 1_024;

/**
 * Which `leaderId` is current for each shard, as this client has seen it, and which ones have
 * ended. A `leaderId` names one term of one shard's leadership (PROTOCOL.md "Cluster mode"): once a
 * shard shows a different one, the earlier term is over and every token it granted is void.
 *
 * What is seen comes from two places: the shard map (`GET /v1/cluster`) and answers that carry a
 * lease (only a shard's leader serves them). A term already known to have ended never becomes
 * current again, so a late answer of a deposed leader (sent before its successor's, delivered
 * after) does not retire the successor. Terms are never compared otherwise: leader ids are opaque.
 */
export class LeaderTerms {
  readonly #current = new Map<number, string>();
  readonly #retired = new Set<string>();
  readonly #listeners = new Set<(leaderId: string) => void>();

  /** Note that `leaderId` leads `shard` now; retires the shard's previous term, if any, and says so. */
  observe(shard: number, leaderId: string): void {
    const current = this.#current.get(shard);
    if (current === leaderId || this.#retired.has(leaderId)) return;
    this.#current.set(shard, leaderId);
    if (current === undefined) return;
    this.#retired.add(current);
    if (this.#retired.size > MAX_RETIRED) this.#retired.delete(this.#retired.values().next().value!);
    for (const listener of this.#listeners) listener(current);
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
