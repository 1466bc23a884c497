/** How a watched promise ended: its value or error and how long it took, or not within the bound. */
export type Settled<T> =
  | { readonly settled: true; readonly ok: true; readonly value: T; readonly ms: number }
  | { readonly settled: true; readonly ok: false; readonly error: unknown; readonly ms: number }
  | { readonly settled: false; readonly ms: number };

/**
 * Wait for `promise`, but no longer than `boundMs`: an operation that has not settled by then is
 * reported as hung (`settled: false`) instead of hanging the caller. A late rejection after that is
 * swallowed, so it can never become an unhandled rejection.
 */
export async function settleWithin<T>(promise: Promise<T>, boundMs: number): Promise<Settled<T>> {
  const start = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<"hung">((resolve) => {
    timer = setTimeout(() => resolve("hung"), boundMs);
  });
  const outcome = promise.then(
    (value) => ({ settled: true as const, ok: true as const, value, ms: performance.now() - start }),
    (error: unknown) => ({ settled: true as const, ok: false as const, error, ms: performance.now() - start }),
  );
  const first = await Promise.race([outcome, hung]);
  clearTimeout(timer);
  return first === "hung" ? { settled: false, ms: performance.now() - start } : first;
}
