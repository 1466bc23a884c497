import { request, type Agent } from "node:http";

/** How one raw HTTP exchange ended: an answer (status and parsed JSON body), or no answer and why. */
export type RawOutcome =
  | { readonly kind: "answer"; readonly status: number; readonly body: unknown }
  | { readonly kind: "failed"; readonly reason: string };

/** Options of {@link rawPost}. */
export interface RawPostOptions {
  /** Give up (destroy the request) after this many ms without a complete answer: reason `timeout`. */
  readonly timeoutMs: number;
  /** Abandon the request on purpose after this many ms: reason `abandoned`. Default: never. */
  readonly abandonAfterMs?: number | undefined;
}

/**
 * POST a JSON body with `node:http` (no retries, no client library: the caller decides what to send
 * again), through `agent` (keep-alive or not). Never rejects: every failure is an outcome, named by
 * the socket error's code (`ECONNRESET`, …), `timeout`, `abandoned`, or `bad-json` for an answer
 * that does not parse (a truncated one).
 */
export function rawPost(agent: Agent, port: number, path: string, body: unknown, options: RawPostOptions): Promise<RawOutcome> {
  return new Promise((resolve) => {
    const text = Buffer.from(JSON.stringify(body));
    let done = false;
    let responded = false;
    const timers: NodeJS.Timeout[] = [];
    const finish = (outcome: RawOutcome): void => {
      if (done) return;
      done = true;
      for (const t of timers) clearTimeout(t);
      resolve(outcome);
    };
    const req = request(
      { agent, host: "127.0.0.1", port, path, method: "POST", headers: { "content-type": "application/json", "content-length": text.length } },
      (res) => {
        responded = true;
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", (err: NodeJS.ErrnoException) => finish({ kind: "failed", reason: err.code ?? "response-error" }));
        res.on("aborted", () => finish({ kind: "failed", reason: "response-aborted" }));
        // 'end' comes before 'close' when the body is complete; a close without it is a cut answer.
        res.on("close", () => finish({ kind: "failed", reason: "response-closed" }));
        res.on("end", () => {
          if (!res.complete) return finish({ kind: "failed", reason: "response-incomplete" });
          const raw = Buffer.concat(chunks).toString("utf8");
          try {
            finish({ kind: "answer", status: res.statusCode ?? 0, body: JSON.parse(raw) as unknown });
          } catch {
            finish({ kind: "failed", reason: "bad-json" });
          }
        });
      },
    );
    const stop = (reason: string): void => {
      finish({ kind: "failed", reason });
      req.destroy();
    };
    req.on("error", (err: NodeJS.ErrnoException) => finish({ kind: "failed", reason: err.code ?? "request-error" }));
    req.on("close", () => {
      if (!responded) finish({ kind: "failed", reason: "closed" });
    });
    timers.push(setTimeout(() => stop("timeout"), options.timeoutMs));
    if (options.abandonAfterMs !== undefined) timers.push(setTimeout(() => stop("abandoned"), options.abandonAfterMs));
    req.end(text);
  });
}
