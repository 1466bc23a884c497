import type { Socket } from "node:net";
import { DIRECTIONS, pickFault, type Direction, type FaultEvent, type FaultKind, type FaultRates } from "./fault-kinds.js";
import { SeededRandom, deriveSeed } from "../seeded-random.js";

/** A range of milliseconds, both ends included. */
export interface MsRange {
  readonly min: number;
  readonly max: number;
}

/** What every connection of one proxy shares: its settings, counters and on/off switch. */
export interface ProxyContext {
  readonly seed: number;
  readonly rates: Readonly<Record<Direction, FaultRates>>;
  readonly delay: MsRange;
  readonly linger: MsRange;
  readonly onFault: ((event: FaultEvent) => void) | undefined;
  readonly faults: Record<Direction, Record<FaultKind, number>>;
  readonly chunks: Record<Direction, number>;
  enabled: boolean;
  /** Fixed one-way latency (ms) added to every chunk, faults on or off (see `FaultProxy.setLatency`). */
  latencyMs: number;
}

interface Queued {
  readonly data: Buffer;
  readonly readyAt: number;
}

type ConnectionState = "open" | "closing" | "blackhole" | "dead";

const SAFETY_CLOSE_MS = 5_000;

function resetSocket(socket: Socket): void {
  if (socket.destroyed) return;
  try {
    socket.resetAndDestroy();
  } catch {
    socket.destroy();
  }
}

function endSocket(socket: Socket): void {
  if (socket.destroyed) return;
  socket.end();
  // A peer that never closes its side must not keep the socket for ever.
  setTimeout(() => socket.destroy(), SAFETY_CLOSE_MS).unref();
}

/** One client connection and its upstream twin, with one forwarder per direction (see `FaultKind`). */
export class ProxiedConnection {
  /** `open` forwards; `closing` (after a truncate), `blackhole` (after a drop) and `dead` swallow everything. */
  state: ConnectionState = "open";
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #forwarders: Record<Direction, Forwarder>;

  constructor(
    readonly id: number,
    readonly client: Socket,
    readonly upstream: Socket,
    readonly context: ProxyContext,
  ) {
    const seed = context.seed;
    this.#forwarders = {
      toServer: new Forwarder(this, "toServer", client, upstream, new SeededRandom(deriveSeed(seed, id, 0))),
      toClient: new Forwarder(this, "toClient", upstream, client, new SeededRandom(deriveSeed(seed, id, 1))),
    };
    client.on("close", () => this.#sideClosed("toServer"));
    upstream.on("close", () => this.#sideClosed("toClient"));
  }

  /** A timer that {@link destroy} cancels. */
  later(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      fn();
    }, ms);
    this.#timers.add(timer);
  }

  /** Count one injected fault and report it to `onFault`. */
  fault(direction: Direction, chunk: number, kind: FaultKind, amount: number): void {
    this.context.faults[direction][kind]++;
    this.context.onFault?.({ connection: this.id, direction, chunk, kind, amount });
  }

  /** Drop: forward nothing more either way and close nothing (see `#sideClosed` for the linger). */
  blackhole(): void {
    this.state = "blackhole";
    for (const d of DIRECTIONS) this.#forwarders[d].discard();
  }

  /** Truncation: close both sides with a FIN once `from` has written what it still holds. */
  closeAfter(from: Direction): void {
    this.state = "closing";
    const other = from === "toServer" ? "toClient" : "toServer";
    this.#forwarders[other].discard();
    this.#forwarders[from].onDrained(() => {
      endSocket(this.client);
      endSocket(this.upstream);
    });
  }

  /** Reset: destroy both sides with an RST, forgetting whatever was queued. */
  reset(): void {
    this.state = "dead";
    for (const d of DIRECTIONS) this.#forwarders[d].discard();
    resetSocket(this.client);
    resetSocket(this.upstream);
  }

  /** Tear both sides down at once (the proxy is closing). */
  destroy(): void {
    this.state = "dead";
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    this.client.destroy();
    this.upstream.destroy();
  }

  /** The source of `direction` closed: pass the close on, the way the state says. */
  #sideClosed(direction: Direction): void {
    const forwarder = this.#forwarders[direction];
    const peer = direction === "toServer" ? this.upstream : this.client;
    if (this.state === "dead" || peer.destroyed) return;
    if (this.state === "blackhole") {
      // The server hears of a vanished client late; a vanished server is never heard of by the client.
      if (direction === "toServer") {
        const ms = forwarder.rng.int(this.context.linger.min, this.context.linger.max);
        this.later(ms, () => peer.destroy());
      }
      return;
    }
    forwarder.onDrained(() => endSocket(peer));
  }
}

/** Moves one direction's chunks, in order, through the fault decisions and delays. */
class Forwarder {
  #queue: Queued[] = [];
  #timer: NodeJS.Timeout | undefined;
  #chunk = 0;
  #drained: (() => void)[] = [];

  constructor(
    readonly connection: ProxiedConnection,
    readonly direction: Direction,
    readonly source: Socket,
    readonly sink: Socket,
    readonly rng: SeededRandom,
  ) {
    source.on("data", (data: Buffer) => this.#onData(data));
  }

  /** Forget what is queued (the connection died or became a black hole). */
  discard(): void {
    this.#queue = [];
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#drained = [];
  }

  /** Run `fn` once every queued chunk has been written (at once if none is queued). */
  onDrained(fn: () => void): void {
    if (this.#queue.length === 0) fn();
    else this.#drained.push(fn);
  }

  #onData(data: Buffer): void {
    const conn = this.connection;
    const ctx = conn.context;
    const index = this.#chunk++;
    ctx.chunks[this.direction]++;
    if (conn.state !== "open") return; // swallowed: a black hole, or closing, or dead
    // Always draw, so the decisions for chunk k do not depend on whether faults were on before.
    const u = this.rng.next();
    const rates = ctx.rates[this.direction];
    const kind = ctx.enabled ? pickFault(rates, u) : undefined;
    switch (kind) {
      case undefined:
        this.#enqueue(data, ctx.latencyMs);
        return;
      case "delay": {
        const ms = this.rng.int(ctx.delay.min, ctx.delay.max);
        conn.fault(this.direction, index, kind, ms);
        this.#enqueue(data, ms + ctx.latencyMs);
        return;
      }
      case "drop":
        conn.fault(this.direction, index, kind, 0);
        conn.blackhole();
        return;
      case "truncate": {
        const keep = this.rng.int(0, data.length - 1);
        conn.fault(this.direction, index, kind, keep);
        if (keep > 0) this.#enqueue(data.subarray(0, keep), ctx.latencyMs);
        conn.closeAfter(this.direction);
        return;
      }
      case "reset":
        conn.fault(this.direction, index, kind, 0);
        conn.reset();
        return;
    }
  }

  #enqueue(data: Buffer, delayMs: number): void {
    this.#queue.push({ data, readyAt: performance.now() + delayMs });
    if (this.#timer === undefined) this.#pump();
  }

  #pump(): void {
    this.#timer = undefined;
    const now = performance.now();
    for (let head = this.#queue[0]; head !== undefined; head = this.#queue[0]) {
      if (head.readyAt > now) {
        // Later chunks wait behind a delayed one: a delay holds the stream, it never reorders it.
        this.#timer = setTimeout(() => this.#pump(), Math.ceil(head.readyAt - now));
        return;
      }
      this.#queue.shift();
      if (!this.sink.destroyed && !this.sink.writableEnded) this.sink.write(head.data);
    }
    const waiting = this.#drained;
    this.#drained = [];
    for (const fn of waiting) fn();
  }
}

