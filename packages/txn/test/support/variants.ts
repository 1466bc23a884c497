import type { LockClient } from "@leasehold/client";
import { afterAll } from "vitest";
import { conflictPolicy, TransactionManager, type KeyValueStore, type TransactionManagerOptions } from "../../src/index.js";
import { StoreList, type StoreKind } from "./stores.js";

/** One way to run the transaction suites: over which store, with the read cache or without. */
export interface TxnVariant {
  readonly name: string;
  readonly store: StoreKind;
  /** Run with a read cache on every lock-protected table, validating every hit against the store. */
  readonly cache: boolean;
}

/** Every variant the transaction suites run under. */
export const TXN_VARIANTS: readonly TxnVariant[] = [
  { name: "memory store", store: "memory", cache: false },
  { name: "postgres store", store: "postgres", cache: false },
  { name: "memory store, read cache", store: "memory", cache: true },
  { name: "postgres store, read cache", store: "postgres", cache: true },
];

/**
 * Server options for a variant's backend: with the cache, leases of 2 s, because a cache stays
 * cold for a lease after it first sees a lock table (validForMs, here 1 s), and the suites are short.
 */
export function backendOptions(variant: TxnVariant): { leaseMs?: number } {
  return variant.cache ? { leaseMs: 2_000 } : {};
}

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
  const managers: TransactionManager[] = [];
  afterAll(async () => {
    for (const m of managers.splice(0)) m.close();
    await stores.closeAll();
  });
  return {
    store: () => stores.open(),
    async manager(options) {
      const store = options.store ?? (await stores.open());
      const cached = Object.entries(options.tables)
        .filter(([, handler]) => conflictPolicy(handler).lock !== "none")
        .map(([table]) => table);
      const readCache = variant.cache && cached.length > 0 ? { prefixes: cached, validationRate: 1 } : undefined;
      const manager = new TransactionManager({ ...options, store, readCache });
      managers.push(manager);
      return manager;
    },
  };
}

export type { LockClient };
