import { HttpLockService, LockClient } from "@leasehold/client";
import { InMemoryKeyValueStore, TransactionManager, type KeyValueStore, type UnlockMode } from "@leasehold/txn";
import { silentLogger } from "./silent-logger.js";
import { countingLockService, type CountingLockService } from "./txn-counting-service.js";

/** One transaction manager over HTTP with its own client, counted transport and store. */
export interface TxnBenchClient {
  readonly manager: TransactionManager;
  readonly client: LockClient;
  readonly service: CountingLockService;
  readonly store: KeyValueStore;
  /** Flush pending unlocks (`close()` waits for them) and close the connections. */
  close(): Promise<void>;
}

/** The table every benchmark transaction writes. */
export const BENCH_TABLE = "bench";

/** A manager in `mode` on its own HTTP connections to `baseUrl`, so both modes are counted apart. */
export function txnBenchClient(baseUrl: string, namespace: string, mode: UnlockMode, store: KeyValueStore = new InMemoryKeyValueStore()): TxnBenchClient {
  const http = new HttpLockService({ baseUrl });
  const service = countingLockService(http);
  const client = LockClient.embedded(service, { namespace, logger: silentLogger() });
  const manager = new TransactionManager({ client, store, tables: { [BENCH_TABLE]: "retry-on-write-write" }, unlockMode: mode, retries: 0 });
  return {
    manager,
    client,
    service,
    store,
    async close() {
      await client.close();
      await http.close();
    },
  };
}

/**
 * One read-modify-write transaction on `row`; resolves with the commit latency in ms: from the
 * end of the transaction's body (the moment it asks to commit) to `run()` resolving.
 */
export async function incrementOnce(manager: TransactionManager, row: string): Promise<number> {
  let commitAsked = 0;
  await manager.run(async (txn) => {
    const value = await txn.get(BENCH_TABLE, row, "n");
    txn.put(BENCH_TABLE, row, "n", String(Number(value ?? "0") + 1));
    commitAsked = performance.now();
  });
  return performance.now() - commitAsked;
}
