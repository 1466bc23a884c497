import type { LockClient } from "@leasehold/client";
import { afterAll } from "vitest";
import { TransactionManager, type KeyValueStore, type TransactionManagerOptions } from "../../src/index.js";
import { StoreList, type StoreKind } from "./stores.js";

/** One way to run the transaction suites: over which store. */
export interface TxnVariant {
  readonly name: string;
  readonly store: StoreKind;
}

/** Every variant the transaction suites run under. */
export const TXN_VARIANTS: readonly TxnVariant[] = [
  { name: "memory store", store: "memory" },
  { name: "postgres store", store: "postgres" },
];

/** What a suite needs to make managers of its variant: each over a fresh store, closed after the suite. */
export interface VariantKit {
  /** A fresh empty store of the variant (closed after the suite). */
  store(): Promise<KeyValueStore>;
  /** A manager of the variant over `store` (a fresh one when not given). */
  manager(options: Omit<TransactionManagerOptions, "store"> & { readonly store?: KeyValueStore }): Promise<TransactionManager>;
}

/** Call inside a `describe` of the variant: stores it opens are closed after the suite. */
export function variantKit(variant: TxnVariant): VariantKit {
  const stores = new StoreList(variant.store);
  afterAll(() => stores.closeAll());
  return {
    store: () => stores.open(),
    async manager(options) {
      const store = options.store ?? (await stores.open());
      return new TransactionManager({ ...options, store });
    },
  };
}

export type { LockClient };
