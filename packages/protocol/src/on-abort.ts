/** The callbacks waiting for one signal, and the one listener that runs them. */
interface FanOut {
  readonly callbacks: Set<Subscription>;
  readonly listener: () => void;
}

/** One registration (its own object, so the same function registered twice runs twice). */
interface Subscription {
  readonly callback: () => void;
}

const fanOuts = new WeakMap<AbortSignal, FanOut>();

/**
 * Run `callback` when `signal` aborts; the returned function stops listening (call it when the
 * operation the signal could abort has ended; calling it again does nothing).
 *
 * Why not `signal.addEventListener("abort", …)` per call: one signal is often shared by many calls
 * at once (a process's shutdown signal given to every waiting lock), and Node prints
 * `MaxListenersExceededWarning` once a signal has more than 10 listeners. Here each signal gets a
 * single listener, added with its first callback and removed when its last callback unsubscribes,
 * and the callbacks are kept in a set beside it (in a `WeakMap`, so a dropped signal is collected
 * with its callbacks). Aborting runs every callback still subscribed, in the order they came,
 * as listeners would run; one that unsubscribes during the abort before its turn is skipped, as a
 * removed listener would be. A callback that throws does not stop the others: its error is
 * rethrown on a later microtask (uncaught, as an event listener's error would be).
 *
 * Callers check `signal.aborted` first: as with `addEventListener`, a signal that has already
 * aborted never calls back.
 */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  let fanOut = fanOuts.get(signal);
  if (fanOut === undefined) {
    const callbacks = new Set<Subscription>();
    const listener = (): void => {
      fanOuts.delete(signal);
      // A Set iterates live: a subscription deleted before its turn is skipped.
      for (const subscription of callbacks) {
        try {
          subscription.callback();
        } catch (err) {
          queueMicrotask(() => {
            throw err;
          });
        }
      }
      callbacks.clear();
    };
    fanOut = { callbacks, listener };
    fanOuts.set(signal, fanOut);
    signal.addEventListener("abort", listener, { once: true });
  }
  const { callbacks, listener } = fanOut;
  const subscription: Subscription = { callback };
  callbacks.add(subscription);
  return () => {
    if (!callbacks.delete(subscription) || callbacks.size > 0) return;
    if (fanOuts.get(signal)?.callbacks === callbacks) {
      fanOuts.delete(signal);
      signal.removeEventListener("abort", listener);
    }
  };
}
