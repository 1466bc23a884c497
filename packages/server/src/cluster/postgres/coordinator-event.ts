/** What the PostgreSQL coordinator's `onCommitted` option hears (TEST ONLY): a shard acquisition or a bound extension that took effect, stamped by the database clock. */
export type CoordinatorEvent =
  | { readonly kind: "acquisition"; readonly shard: number; readonly epoch: number; readonly dbTimeUs: number }
  | {
      readonly kind: "bound extension";
      readonly namespace: string;
      readonly shard: number;
      readonly epoch: number;
      readonly from: number;
      readonly to: number;
      readonly dbTimeUs: number;
    };

/** What a bound loaded in a statement reports to a test's `onCommitted`: an extension by the term. */
export type LoadedBoundEvent = Extract<CoordinatorEvent, { readonly kind: "bound extension" }>;
