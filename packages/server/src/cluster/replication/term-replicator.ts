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
   * Sequence number of the last appended entry an answer must wait for (0: none yet). An answer
   * that reveals a grant waits for it: every grant the table made so far, its own among them.
   */
  get neededSeq(): number {
    return this.lastNeeded;
  }

  /**
   * `null` when every entry appended so far that needs an acknowledgement has it (or the row says
   * no standby is in sync): an answer given now reveals nothing the standby lacks. Otherwise the
   * wait for them (see `ShardReplication.whenAcked`: rejects when this leader was deposed or the
   * replication closed).
   */
  settled(upTo = this.lastNeeded): Promise<unknown> | null {
    return this.replication.pendingAck(upTo);
  }
}
