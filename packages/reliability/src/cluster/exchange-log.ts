import { Agent, type Dispatcher } from "undici";

/** One HTTP exchange a test client made: to whom, what, and what came back when. */
export interface Exchange {
  /** The client's label (e.g. `keeper rc-held-5`, `probe rc-held-5`). */
  readonly client: string;
  /** The server asked (`http://127.0.0.1:<port>`). */
  readonly origin: string;
  readonly method: string;
  readonly path: string;
  /** When it was dispatched: the recorder's clock, and the wall clock (server log lines' `time`). */
  readonly sentAt: number;
  readonly sentWall: number;
  /** When the status line came, or the exchange failed (the recorder's clock); unset while in flight. */
  answeredAt?: number;
  /** The HTTP status; unset when the exchange failed. */
  status?: number;
  /** The error's code or message when the exchange failed (refused, reset, aborted). */
  error?: string;
}

/**
 * Every exchange of the test's clients, for a failing run's evidence: which server answered each
 * lock, refresh and probe, and when (a client with several `baseUrls` follows 421s and retries
 * elsewhere, so the answer alone does not say). Each client gets a {@link dispatcher} of its own
 * that records into one shared list.
 */
export class ExchangeLog {
  /** Every exchange in the order dispatched. */
  readonly exchanges: Exchange[] = [];
  readonly #agents: Agent[] = [];

  /** @param now - The clock exchanges are stamped with (the history recorder's). */
  constructor(private readonly now: () => number) {}

  /** A dispatcher for one client labelled `client`: a keep-alive agent that records each exchange. */
  dispatcher(client: string): Dispatcher {
    const agent = new Agent({ keepAliveTimeout: 30_000, connections: 16 });
    this.#agents.push(agent);
    return agent.compose((dispatch) => (options, handler) => {
      const entry: Exchange = { client, origin: String(options.origin ?? ""), method: options.method, path: options.path, sentAt: this.now(), sentWall: Date.now() };
      this.exchanges.push(entry);
      return dispatch(options, this.#observed(handler, entry));
    });
  }

  /** The exchanges of `client` dispatched at or after index `from` of {@link exchanges}. */
  since(from: number, client: string): Exchange[] {
    return this.exchanges.slice(from).filter((e) => e.client === client);
  }

  /** Close every agent (after the clients are closed). */
  async close(): Promise<void> {
    await Promise.all(this.#agents.map((a) => a.close().catch(() => undefined)));
  }

  /** `handler` with its status line and failure noted in `entry` (every other call passed through). */
  #observed(handler: Dispatcher.DispatchHandler, entry: Exchange): Dispatcher.DispatchHandler {
    const now = this.now;
    return new Proxy(handler, {
      get(target, prop) {
        const value: unknown = Reflect.get(target, prop, target);
        if (typeof value !== "function") return value;
        const fn = value as (...args: unknown[]) => unknown;
        if (prop === "onResponseStart" || prop === "onHeaders") {
          return (...args: unknown[]) => {
            entry.answeredAt ??= now();
            entry.status ??= (prop === "onHeaders" ? args[0] : args[1]) as number;
            return fn.apply(target, args);
          };
        }
        if (prop === "onResponseError" || prop === "onError") {
          return (...args: unknown[]) => {
            const err = (prop === "onError" ? args[0] : args[1]) as { code?: string; message?: string } | undefined;
            entry.answeredAt ??= now();
            entry.error ??= err?.code ?? err?.message ?? "error";
            return fn.apply(target, args);
          };
        }
        return fn.bind(target);
      },
    });
  }
}
