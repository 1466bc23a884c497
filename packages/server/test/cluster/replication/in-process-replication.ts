import pino from "pino";
import type { Coordinator } from "../../../src/cluster/coordinator.js";
import type { ReplicaStore } from "../../../src/cluster/replication/replica-store.js";
import type { ReplicationMessage } from "../../../src/cluster/replication/replication-wire.js";
import { ShardReplication } from "../../../src/cluster/replication/shard-replication.js";
import type { FakeReplicationClock } from "./fake-replication-clock.js";

/**
 * A leader's {@link ShardReplication} of shard 0 (epoch 1, leader id `L1`) streaming in process to
 * `store` through a JSON round trip, with a coordinator that accepts every write. While `holding()`
 * each delivery is queued on `held` instead (the test delivers them: a standby slow to answer, or
 * a partition that heals).
 */
export function inProcessReplication(store: ReplicaStore, snapshot: () => unknown, clock: FakeReplicationClock, holding: () => boolean, held: (() => void)[]): ShardReplication {
  const coordinator = { nameStandby: () => Promise.resolve(true), setInSync: () => Promise.resolve(true) } as unknown as Coordinator;
  return new ShardReplication({
    term: { shard: 0, epoch: 1, serverId: "a", incarnation: "a-inc" },
    leaderId: "L1",
    coordinator,
    connect: () => ({
      send: (m) =>
        new Promise((resolve, reject) => {
          const deliver = (): void => {
            try {
              resolve(store.receive(JSON.parse(JSON.stringify(m)) as ReplicationMessage));
            } catch (err) {
              reject(err);
            }
          };
          if (holding()) held.push(deliver);
          else deliver();
        }).then((a) => a as { ackedSeq: number }),
      close: () => Promise.resolve(),
    }),
    snapshot,
    clock,
    lateMs: 1_000,
    logger: pino({ level: "silent" }),
    onFenced: () => undefined,
    onStandbyLost: () => undefined,
  });
}
