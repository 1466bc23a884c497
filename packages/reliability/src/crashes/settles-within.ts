/**
 * Whether `promise` settles (either way) within `ms`. The promise is not cancelled: this only
 * bounds how long a check waits for it, so a hang becomes a counted violation, not a stuck test.
 */
export function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return Promise.race([
    promise.then(
      () => true,
      () => true,
    ),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref()),
  ]);
}
