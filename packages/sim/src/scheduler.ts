import { createHash, type Hash } from "node:crypto";

/** A scheduled event: what runs, when (simulated ms), for whom, and the tie-breaker that keeps order total. */
interface SimEvent {
  readonly at: number;
  readonly seq: number;
  readonly owner: string;
  readonly label: string;
  readonly fn: () => void;
  cancelled: boolean;
}

/** What runs events on behalf of an owner (a simulated process): it may hold them back (a paused process). */
export interface EventOwner {
  /** True while the owner takes no events (paused): the scheduler hands them to {@link hold} instead. */
  readonly holding: boolean;
  /** Keep `fire` until the owner takes events again. */
  hold(fire: () => void): void;
  /** False once the owner is gone (crashed, exited): its events are dropped. */
  readonly alive: boolean;
}

/** Node's own `process.nextTick`, taken before a run guards the globals: the one real wait a run makes (to let promise callbacks finish). */
const realNextTick = process.nextTick.bind(process);

/**
 * One seeded world's time: a queue of events in simulated milliseconds, run one at a time in
 * (time, sequence) order, each followed by every promise callback it caused (the microtask queue
 * drains before the next event), so the same choices give the same run, event for event. Every
 * event that runs is folded into a digest (time, owner, label): two runs of one seed must end with
 * the same digest.
 */
export class Scheduler {
  /** Simulated time now (ms since the run began). */
  now = 0;
  /** Events run so far. */
  steps = 0;
  private seq = 0;
  private heap: SimEvent[] = [];
  private readonly owners = new Map<string, EventOwner>();
  private readonly digest: Hash = createHash("sha256");
  /** Text not yet folded into {@link digest}: one `update` per ~64 KiB, not one per event (a hash of the concatenation is the same). */
  private pendingDigest = "";
  private readonly onStep: ((at: number, owner: string, label: string) => void) | null;

  /** @param onStep Hears every event as it runs (the trace); default nothing. */
  constructor(onStep?: (at: number, owner: string, label: string) => void) {
    this.onStep = onStep ?? null;
  }

  /** Events of `name` go through `owner` (held while it holds, dropped once it is gone). */
  register(name: string, owner: EventOwner): void {
    this.owners.set(name, owner);
  }

  /** Run `fn` at simulated time `at` (not before now) for `owner`; answers the cancel. */
  at(at: number, owner: string, label: string, fn: () => void): () => void {
    const event: SimEvent = { at: Math.max(at, this.now), seq: this.seq++, owner, label, fn, cancelled: false };
    this.push(event);
    return () => {
      event.cancelled = true;
    };
  }

  /** {@link at} `ms` from now. */
  after(ms: number, owner: string, label: string, fn: () => void): () => void {
    return this.at(this.now + Math.max(0, ms), owner, label, fn);
  }

  /** Pending events (cancelled ones included until they come up). */
  get pending(): number {
    return this.heap.length;
  }

  /** Run events until simulated time `until` (events at `until` included), or until `stop()` says so. */
  async runUntil(until: number, stop: () => boolean = () => false): Promise<void> {
    while (!stop()) {
      const next = this.heap[0];
      if (next === undefined || next.at > until) break;
      this.pop();
      if (next.cancelled) continue;
      this.now = next.at;
      const owner = this.owners.get(next.owner);
      if (owner !== undefined && !owner.alive) continue;
      if (owner !== undefined && owner.holding) {
        owner.hold(() => this.at(this.now, next.owner, next.label, next.fn));
        continue;
      }
      this.steps++;
      this.fold(`${next.at.toFixed(3)} ${next.owner} ${next.label}\n`);
      this.onStep?.(next.at, next.owner, next.label);
      next.fn();
      await drainMicrotasks();
    }
    if (!stop()) this.now = Math.max(this.now, until);
  }

  /** Fold `text` into the digest (a decision the run made outside any event). */
  note(text: string): void {
    this.fold(text);
  }

  /** The digest of every event run so far (hex). */
  hex(): string {
    this.flushDigest();
    return this.digest.copy().digest("hex");
  }

  private fold(text: string): void {
    this.pendingDigest += text;
    if (this.pendingDigest.length > 65_536) this.flushDigest();
  }

  private flushDigest(): void {
    this.digest.update(this.pendingDigest);
    this.pendingDigest = "";
  }

  private push(event: SimEvent): void {
    const heap = this.heap;
    heap.push(event);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  private pop(): void {
    const heap = this.heap;
    const last = heap.pop()!;
    if (heap.length === 0) return;
    heap[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && before(heap[l]!, heap[m]!)) m = l;
      if (r < heap.length && before(heap[r]!, heap[m]!)) m = r;
      if (m === i) return;
      [heap[i], heap[m]] = [heap[m]!, heap[i]!];
      i = m;
    }
  }
}

function before(a: SimEvent, b: SimEvent): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

/**
 * Let every promise callback queued so far (and those they queue) run. Node runs a `nextTick`
 * callback queued from a promise callback only once the microtask queue is empty, so this resolves
 * after everything the event caused, without a turn of the event loop (a `setImmediate` here made
 * runs twice as slow, with the same digest over seeds 1–100).
 */
export function drainMicrotasks(): Promise<void> {
  return new Promise((resolve) => realNextTick(resolve));
}
