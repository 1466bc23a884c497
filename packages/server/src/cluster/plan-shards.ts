import type { HeldTerm, MemberIdentity, ShardLease } from "./coordinator.js";

/** When this server first saw a lease row's current version, on its monotonic clock. */
export interface Seen {
  readonly version: number;
  readonly at: number;
}

/**
 * Note, in `seen` (per shard, updated in place), when each row's version was first seen at `now`;
 * answers the rows that name this process (`self`: its server id *and* its incarnation) under an
 * epoch it does not lead in memory (`heldEpochs` per shard, `undefined` where it leads nothing):
 * acquisitions whose answer was lost, never served, which it should release rather than wait for
 * them to expire. A row of the same server id but another incarnation is another process's (a
 * predecessor, or a duplicate still serving it): never released here, it expires or is released
 * by its own process. Nor is a row that names an in-sync standby (`keepSynced`, default true):
 * it is a term this process served and lost (its gate closed while its renewals were slow), whose
 * standby holds every grant answered; releasing it would clear the standby and start the shard
 * empty under a new `leaderId` (every lock lost, seen in issue 29's repeated crash when one
 * server's statements stalled for a second), while left to expire it is taken over with its
 * table. An acquisition clears the standby columns, so a lost acquisition's row is still released.
 * `keepSynced: false` is the TEST ONLY break `release-synced-orphan`.
 */
export function observeRows(
  seen: (Seen | null)[],
  leases: readonly ShardLease[],
  now: number,
  self: MemberIdentity,
  heldEpochs: readonly (number | undefined)[],
  keepSynced = true,
): HeldTerm[] {
  const orphans: HeldTerm[] = [];
  for (const row of leases) {
    const since = seen[row.shard];
    if (since === null || since === undefined || since.version !== row.version) seen[row.shard] = { version: row.version, at: now };
    if (row.holder !== self.serverId || row.incarnation !== self.incarnation || heldEpochs[row.shard] === row.epoch) continue;
    if (keepSynced && namesSyncedStandby(row)) continue;
    orphans.push({ shard: row.shard, epoch: row.epoch });
  }
  return orphans;
}

/** True when `row` names a standby recorded in sync: its orphan is left to that standby, never released (see {@link observeRows}). */
export function namesSyncedStandby(row: ShardLease | undefined): boolean {
  return row !== undefined && row.inSync && row.standbyId !== null;
}

/** What one pass of the leadership loop knows. */
export interface PlanInput {
  readonly leases: readonly ShardLease[];
  /** When each row's current version was first seen (monotonic ms), `null` if never. */
  readonly seen: readonly (Seen | null)[];
  readonly now: number;
  readonly leaderLeaseMs: number;
  readonly serverId: string;
  /**
   * This process's incarnation: a row of `serverId` is this process's own only with it. A row of
   * another incarnation (a dead predecessor with the same server id) is treated like any other
   * server's: taken once expired and unchanged for a leader lease.
   */
  readonly incarnation: string;
  /** Live members, sorted, this server included (a stopping member has left this list). */
  readonly members: readonly string[];
  /**
   * Live members still in their join wait (they take nothing for a leader lease after they
   * start). Default none. They count in nobody's share: a released shard is taken at once by a
   * server that can take it, and balance moves shards to a joiner only once it is ready. This
   * server is never treated as joining (the runtime plans only past its own join wait).
   */
  readonly joining?: readonly string[] | undefined;
  /**
   * Live members (by their heartbeat rows) that do not answer: no health probe answered within a
   * leader lease, or their own terms lapse (answering-members.ts). Default none. Like joiners they
   * count in nobody's share and are never short of one, so no shard is balanced to them: a member
   * killed moments ago keeps a fresh heartbeat row for two leader leases (issue 29).
   */
  readonly silent?: readonly string[] | undefined;
  /** Which shards this server leads now. */
  readonly led: readonly boolean[];
}

/** What to do in this pass. */
export interface Plan {
  /** Shards to try to acquire now. */
  readonly take: number[];
  /** One surplus shard to give up, or `null`. */
  readonly release: number | null;
  /** This server's share of the shards, among the members able to take shards now. */
  readonly share: number;
}

/**
 * Decide which shards to take and which one to give up. A shard whose leader's lease expired and
 * whose row was seen unchanged for a whole leader lease is taken whatever the shares say
 * (availability first; balance moves it later). A released or never-led shard is taken only while
 * this server leads less than its share (`⌊S/n⌋`, plus one for the first `S mod n` members in id
 * order, where the members are the live ones past their join wait that answer), so servers do not grab each
 * other's hand-overs, and a joiner (which takes nothing yet) never makes them decline one; one
 * still free after a whole leader lease is taken whatever the shares say, like an expired one.
 * An expired row that names an in-sync standby waits one more leader lease for every server but
 * that standby (the same process: server id and incarnation), which takes it with its replica.
 * A never-led row (a cluster's cold start) is taken only while this server leads less than its
 * share among *all* live members, joiners included: servers started together end their join waits
 * moments apart, and the first one ready must not take every shard (the others would then collide
 * with it row by row, and balance would hand most back one at a time, each after a lease-wait).
 * Free rows are tried from where this server's share would start if every live member took its
 * share in id order (wrapping), so servers taking at once try different rows first instead of
 * all contending for shard 0, 1, 2, ….
 * Surplus is given up one shard per pass,
 * and only while another live member leads less than its own share (hysteresis: a member at its
 * share never triggers a move, and the released shard goes to the one short of its share, never
 * back), so leadership does not thrash.
 */
export function planShards(input: PlanInput): Plan {
  const { leases, seen, now, leaderLeaseMs, serverId, incarnation, led } = input;
  const joining = new Set([...(input.joining ?? []), ...(input.silent ?? [])]);
  joining.delete(serverId);
  const members = input.members.filter((m) => !joining.has(m));
  if (!members.includes(serverId)) members.push(serverId);
  members.sort();
  const count = leases.length;
  const n = Math.max(1, members.length);
  const index = members.indexOf(serverId);
  const share = Math.floor(count / n) + (index >= 0 && index < count % n ? 1 : 0);
  // Every live member, joiners included: the shares of a cold start and where to start looking.
  const all = [...new Set([...input.members, serverId])].sort();
  const allIndex = all.indexOf(serverId);
  const coldShare = Math.min(share, Math.floor(count / all.length) + (allIndex < count % all.length ? 1 : 0));
  // Where this member's share starts if every member takes its share in id order.
  const offset = allIndex * Math.floor(count / all.length) + Math.min(allIndex, count % all.length);
  let leading = 0;
  for (let s = 0; s < count; s++) if (led[s] === true) leading++;
  const take: number[] = [];
  let free = 0;
  for (let k = 0; k < count; k++) {
    const row = leases[(offset + k) % count]!;
    if (led[row.shard] === true || (row.holder === serverId && row.incarnation === incarnation)) continue;
    const since = seen[row.shard];
    const unchangedFor = since !== null && since !== undefined && since.version === row.version ? now - since.at : -1;
    const unchangedForALease = unchangedFor >= leaderLeaseMs;
    if (row.holder === null) {
      free++;
      // Below its share, at once; otherwise only once nobody took it for a whole leader lease (the
      // servers short of their share are gone: a member killed moments ago still counts in the
      // shares until its heartbeat ages out), so a released shard never waits longer than a crash.
      // Never-led rows (epoch 0, a cluster's cold start) go by the shares alone, joiners counted:
      // taking them all would only make balance hand them back one by one, each after a lease-wait.
      if (row.epoch === 0 ? leading + take.length < coldShare : leading + take.length < share || unchangedForALease) take.push(row.shard);
      continue;
    }
    // A row naming an in-sync standby is its standby's to take with the table (same leaderId, no
    // lease-wait): the others leave it to that process for one more leader lease.
    const standbyFirst = row.inSync && row.standbyId !== null && !(row.standbyId === serverId && row.standbyIncarnation === incarnation);
    if (row.expired && unchangedForALease && (!standbyFirst || unchangedFor >= 2 * leaderLeaseMs)) {
      free++;
      take.push(row.shard);
    }
  }
  let release: number | null = null;
  if (free === 0 && leading > share && someoneShort(leases, members, count, n, serverId)) {
    for (let s = count - 1; s >= 0; s--) {
      if (led[s] === true) {
        release = s;
        break;
      }
    }
  }
  return { take, release, share };
}

/** True when some other member able to take shards leads fewer (by the lease rows) than its share. */
function someoneShort(leases: readonly ShardLease[], members: readonly string[], count: number, n: number, serverId: string): boolean {
  const leading = new Map<string, number>();
  for (const row of leases) if (row.holder !== null && !row.expired) leading.set(row.holder, (leading.get(row.holder) ?? 0) + 1);
  return members.some((member, index) => member !== serverId && (leading.get(member) ?? 0) < Math.floor(count / n) + (index < count % n ? 1 : 0));
}

/** What {@link nextPassDelay} decides from. */
export interface PassTiming {
  readonly leases: readonly ShardLease[];
  /** When each row's current version was first seen (monotonic ms), `null` if never. */
  readonly seen: readonly (Seen | null)[];
  readonly now: number;
  readonly leaderLeaseMs: number;
  /** When this server's join wait ends (monotonic ms), `null` when it is over or has not begun. */
  readonly joinWaitEnds: number | null;
  /** True for a row this very process holds (it never waits to take its own rows). */
  readonly own: (row: ShardLease) => boolean;
  /** When the last pass's read of the rows was sent, when that read failed (monotonic ms); `null` or absent when it answered. */
  readonly failedReadSentAt?: number | null | undefined;
}

/**
 * How long until the next pass (ms): a third of the leader lease, or sooner when the join wait
 * ends (the first pass that may take shards runs right then), or when another server's row will
 * have been seen unchanged for a whole leader lease (a dead leader's rows stop changing: taking
 * them right then, rather than up to a third of a lease later, is the failover time). Rows already
 * overdue (not takeable at the last pass) wait for the regular cadence: no busy loop. After a
 * read of the rows that failed, the cadence counts from when that read was sent, not from its
 * failure: a lost answer already cost a statement timeout (a third of the leader lease), and an
 * in-sync standby has less than a leader lease to take a dead leader's shard before the other
 * members take it empty, which two lost answers each followed by a whole cadence used up (found
 * by `pnpm sim`, seeds 18293, 21643, 63666, 65771, 69453, 73112: a transaction's
 * immutable-timestamp lock lost). A read that failed at once still waits the cadence out.
 */
export function nextPassDelay(t: PassTiming): number {
  const cadence = Math.floor(t.leaderLeaseMs / 3);
  let delay = cadence;
  if (t.failedReadSentAt !== null && t.failedReadSentAt !== undefined) delay = Math.max(0, Math.min(delay, t.failedReadSentAt + cadence - t.now));
  if (t.joinWaitEnds !== null) delay = Math.min(delay, Math.max(1, t.joinWaitEnds - t.now));
  for (const row of t.leases) {
    const since = t.seen[row.shard];
    if (row.holder === null || t.own(row) || since === null || since === undefined) continue;
    const due = since.at + t.leaderLeaseMs + 20 - t.now;
    if (due > 0) delay = Math.min(delay, due);
  }
  return delay;
}
