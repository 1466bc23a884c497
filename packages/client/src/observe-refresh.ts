import type { RefreshResponse } from "@leasehold/protocol";
import type { BatchFunction } from "./autobatcher.js";
import type { RefreshAsk } from "./batch-functions.js";
import { clientChannels, clientMessages, errorCode } from "./client-diagnostics.js";

/**
 * The client's batched refresh, publishing `leasehold:client:refresh` when it ends (success or
 * failure) while someone listens. One message per batch: every refresh that coalesced into it,
 * the refresher's and `refresh()` callers', however many `refresh` calls it took.
 */
export function observeRefresh(
  namespace: string,
  batch: BatchFunction<RefreshAsk, RefreshResponse>,
  now: () => number,
): BatchFunction<RefreshAsk, RefreshResponse> {
  const c = clientChannels.refresh;
  return (requests) => {
    if (!c.hasSubscribers) return batch(requests);
    const start = now();
    // The tokens the batch will send: asked for and, where the ask says so, still wanted now.
    const sent = new Set<string>();
    for (const { tokens, stillWanted } of requests) {
      for (const token of tokens) if (stillWanted === undefined || stillWanted(token)) sent.add(token);
    }
    const tokenCount = sent.size;
    return batch(requests).then(
      (answers) => {
        const refreshed = new Set<string>();
        for (const answer of answers) for (const token of answer.refreshed) refreshed.add(token);
        c.publish(clientMessages.refresh(namespace, tokenCount, refreshed.size, now() - start, undefined));
        return answers;
      },
      (err: unknown) => {
        c.publish(clientMessages.refresh(namespace, tokenCount, 0, now() - start, errorCode(err)));
        throw err;
      },
    );
  };
}
