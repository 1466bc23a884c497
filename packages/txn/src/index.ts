export { TransactionManager } from "./transaction-manager.js";
export type { TransactionManagerOptions, RunOptions } from "./transaction-manager.js";
export { Transaction } from "./transaction.js";
export { CONFLICT_HANDLERS, conflictPolicy, isConflictHandler } from "./conflict-handler.js";
export type { ConflictHandler, ConflictPolicy } from "./conflict-handler.js";
export { UNLOCK_MODES } from "./unlock-mode.js";
export type { UnlockMode } from "./unlock-mode.js";
export { InMemoryKeyValueStore } from "./in-memory-key-value-store.js";
export { PostgresKeyValueStore } from "./postgres-key-value-store.js";
export type { PostgresKeyValueStoreOptions } from "./postgres-key-value-store.js";
export type { KeyValueStore, Cell, Version } from "./key-value-store.js";
export { ReadCache, ReadCacheValidationError } from "./read-cache.js";
export type { ReadCacheOptions, ReadCacheStats, CacheView } from "./read-cache.js";
export { Sweeper } from "./sweeper.js";
export type { SweeperOptions, SweepResult } from "./sweeper.js";
export {
  TransactionError,
  TransactionConflictError,
  TransactionLocksLostError,
  TransactionLockTimeoutError,
  TRANSACTION_ERROR_CODES,
} from "./transaction-errors.js";
export type { TransactionErrorCode, ConflictKind } from "./transaction-errors.js";
export { TRANSACTIONS_TABLE, TransactionsTable, transactionRowLock } from "./transactions-table.js";
export type { WriterStatus } from "./transactions-table.js";
