import type { ServerResponse } from "node:http";
import { CompactLineWriter, type LockBatchLine } from "@leasehold/protocol";
import type { EmbeddedLockService } from "../service/embedded-lock-service.js";
import type { LockBatchRun } from "../service/run-lock-batch.js";
import type { ExtraHeaders } from "../support/send-json.js";
import { undeliveredTokens } from "./undelivered-tokens.js";

/** The media type of a `lock-batch` answer: one JSON object per line, each ended by `\n`. */
export const NDJSON_CONTENT_TYPE = "application/x-ndjson; charset=utf-8";

/** Tokens granted to a namespace whose delivery is not yet certain. */
export interface UndeliveredGrants {
  /** The namespace the tokens belong to. */
  readonly namespace: string;
  /** The tokens; mutable, because a batch adds and removes them as lines are written and flushed. */
  readonly tokens: string[];
}

/** What one request's connection tells {@link serveLockBatch}, shared with the request handler. */
export interface BatchExchange {
  /** The client left before the answer was finished. */
  readonly gone: boolean;
  /** Set here: called once if the client leaves while entries are unresolved. */
  onGone: (() => void) | null;
  /** Set here: grants written but not yet flushed; the handler releases them if the client leaves. */
  granted: UndeliveredGrants | null;
}

/** Everything {@link serveLockBatch} needs for one request. */
export interface ServeLockBatchOptions {
  /** The service that validates and runs the batch (its `beginLockBatch`). */
  readonly service: EmbeddedLockService;
  /** The response the NDJSON lines are written to. */
  readonly res: ServerResponse;
  /** The decoded namespace (the service validates it). */
  readonly namespace: string;
  /** The parsed JSON body, unvalidated: the service validates it. */
  readonly body: unknown;
  /** The request's connection state, shared with the request handler's `close` listener. */
  readonly exchange: BatchExchange;
  /** Extra headers of the `200`, for example `connection: close` while the server stops. */
  readonly headers: ExtraHeaders;
  /** Release grants nobody can ever learn of (the client left before their line was flushed). */
  readonly release: (grants: UndeliveredGrants) => void;
}

/**
 * Serve `lock-batch`: a whole-batch problem throws before anything is written (the handler answers
 * it as an ordinary JSON error); otherwise a `200` NDJSON stream, chunked, with one line per entry
 * written the moment the entry resolves, ended once every entry has a line.
 *
 * Lines answered at once are gathered and written together, so a batch of immediate grants leaves
 * in one socket write (head, lines and end) instead of one per entry. A disconnect aborts the batch (every
 * unresolved entry is abandoned). A grant without a `requestId` counts as delivered once its line
 * was flushed to the socket; if the client leaves before that, it is released, as for `lock`.
 */
export async function serveLockBatch(options: ServeLockBatchOptions): Promise<void> {
  const { service, res, namespace, body, exchange, headers, release } = options;
  const pending: UndeliveredGrants = { namespace, tokens: [] };
  let started = false;
  let answered = 0;
  const start = (): void => {
    if (started) return;
    started = true;
    res.writeHead(200, { ...headers, "content-type": NDJSON_CONTENT_TYPE, "cache-control": "no-store" });
  };

  // Lines answered while the batch starts are gathered into one string and written once: a write
  // per line cost a chunk header and a writev buffer each, which the profile showed as a fifth of
  // the server's time under 64 concurrent callers (docs/benchmarks.md, "Profiles").
  let gathering = true;
  let gathered = "";
  const gatheredTokens: string[] = [];
  // Only called once the service accepted the envelope, so `requests` is an array.
  const entries = (): readonly unknown[] => (body as { readonly requests: readonly unknown[] }).requests;
  // `compact: true` (checked by the service's envelope validation before any line): grants of
  // every lock an entry asked for go out as `{index, token, fencingTokens}` after a lease line.
  const compact = typeof body === "object" && body !== null && (body as { compact?: unknown }).compact === true ? new CompactLineWriter() : undefined;
  const delivered = (tokens: readonly string[]) => (err?: Error | null) => {
    if (err != null) return;
    for (const token of tokens) {
      const at = pending.tokens.indexOf(token);
      if (at >= 0) pending.tokens.splice(at, 1);
    }
  };

  const onResult = (line: LockBatchLine): void => {
    answered++;
    const entry = entries()[line.index];
    const tokens = "result" in line ? undeliveredTokens("lock", entry, line.result) : [];
    if (exchange.gone || res.destroyed) {
      if (tokens.length > 0) release({ namespace, tokens });
      return;
    }
    const text = compact === undefined ? `${JSON.stringify(line)}\n` : compact.text(line, entry);
    if (tokens.length > 0) pending.tokens.push(...tokens);
    if (gathering) {
      gathered += text;
      if (tokens.length > 0) gatheredTokens.push(...tokens);
      return;
    }
    // Lines resolved later are coalesced per tick: a grant held for its standby's acknowledgement
    // (cluster mode) resolves with every other grant of the same acknowledgement, and one write per
    // line cost the leader a writev each and sent the client its callers back in uneven groups.
    later += text;
    if (tokens.length > 0) laterTokens.push(...tokens);
    if (!flushScheduled) {
      flushScheduled = true;
      process.nextTick(flushLater);
    }
  };
  let later = "";
  let laterTokens: string[] = [];
  let flushScheduled = false;
  let ended = false;
  const flushLater = (): void => {
    flushScheduled = false;
    if (later === "" || ended) return;
    const text = later;
    const tokens = laterTokens;
    later = "";
    laterTokens = [];
    // A client gone since: its grants are in `pending`, which the handler releases.
    if (exchange.gone || res.destroyed) return;
    res.write(text, tokens.length === 0 ? undefined : delivered(tokens));
  };

  let run: LockBatchRun;
  try {
    run = service.beginLockBatch(namespace, body, onResult);
  } finally {
    gathering = false;
  }
  // Every entry is running: from here on the answer is a 200 stream, even if all of them wait.
  start();
  const allAnswered = answered === entries().length;
  const written = gatheredTokens.length === 0 ? undefined : delivered(gatheredTokens);
  // Everything answered at once: head, lines and the last chunk leave in one write.
  if (allAnswered) res.end(gathered, written);
  else if (run.onlyAcknowledging) {
    // Every open entry is granted and waits only for the standby's acknowledgement (cluster mode):
    // a round trip. The head and every line then leave together, in one write, as on a single
    // server; an early head would end the client's transit at once and split its callers into
    // twice as many, half-size batches (measured: 16 against 32 locks per batch at 64 callers).
    later = gathered + later;
    laterTokens = [...gatheredTokens, ...laterTokens];
  } else if (gathered !== "") res.write(gathered, written);
  // writeHead only stages the head; with no line written yet, send it now so the client learns
  // at once that the batch was accepted, rather than when its first entry resolves.
  else res.flushHeaders();
  exchange.granted = pending;
  if (allAnswered) {
    await run.done;
    return;
  }
  exchange.onGone = () => run.abandon();
  await run.done;
  exchange.onGone = null;
  // The last lines (still coalescing) leave with the end of the body, in one write.
  ended = true;
  if (!exchange.gone) res.end(later, laterTokens.length === 0 ? undefined : delivered(laterTokens));
}
