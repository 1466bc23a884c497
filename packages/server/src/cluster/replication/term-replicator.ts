import type { ReplicatedTable, ReplicationSinkFn, ShardEntry } from "./replicated-tables.js";
import type { ShardReplication } from "./shard-replication.js";

/** Options of {@link TermReplicator}. */
export interface TermReplicatorOptions {
  /**
   * Which entries an answer must wait for (DESIGN.md: grants; a release needs no acknowledgement
   * before it is answered, a lost one only keeps a lock until it lapses). Default: every entry,
   * which is safe and costs a round trip on releases too.
   */
  readonly needsAck?: ((entry: unknown) => boolean) | undefined;
}

/**
 * Replication of one term's lock table: the table's change feed goes into the shard's log (one
 * `{ ns, entry }` per change, in order, in the turn it happened: group commit does the rest), and
 * {@link hold} keeps an operation's answer until the standby acknowledged what it appended, as the
 * rule demands (sync-rule.ts).
 */
export class TermReplicator {
  /** Sequence number of the last appended entry an answer must wait for. */
  private lastNeeded = 0;
  private started = false;

  constructor(
    private readonly table: ReplicatedTable,
    readonly replication: ShardReplication,
    private readonly options: TermReplicatorOptions = {},
  ) {}

  /** Feed the table's changes into the log from now on. */
  start(): void {
    if (this.started) return;
    this.started = true;
    const needsAck = this.options.needsAck;
    const sink: ReplicationSinkFn = (ns, entry) => {
      const needed = needsAck === undefined || needsAck(entry);
      const seq = this.replication.append({ ns, entry } satisfies ShardEntry, needed);
      if (needed) this.lastNeeded = seq;
    };
    this.table.setReplicationSink(sink as never);
  }

  /** Stop feeding the log (the term ended or hands over). */
  stop(): void {
    if (!this.started) return;
    this.started = false;
    this.table.setReplicationSink(null as never);
  }

  /**
   * Run `operation` and answer its result once the standby acknowledged every entry it appended
   * that needs it (at once when it appended none). For an operation that completes later (a lock
   * that waits), the entries appended until it completed are waited for: at least its own grant,
   * perhaps a few of other requests' too (conservative, never unsafe). Rejects as `whenAcked` does
   * when this leader was deposed: the answer is then never given as a success.
   */
  hold<A>(operation: () => A | Promise<A>): A | Promise<A> {
    const before = this.lastNeeded;
    const result = operation();
    if (result instanceof Promise) {
      return result.then(async (value) => {
        if (this.lastNeeded > before) await this.replication.whenAcked(this.lastNeeded);
        return value;
      });
    }
    if (this.lastNeeded === before) return result;
    return this.replication.whenAcked(this.lastNeeded).then(() => result);
  }
}
