import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { Etcd3, type Lease } from "etcd3";
import { nowNs } from "../stats.js";
import type { PeerDriver } from "./peer.js";

/** etcd's lock service definition (bench/proto/v3lock.proto, read from dist/peers/ at run time). */
const PROTO = fileURLToPath(new URL("../../proto/v3lock.proto", import.meta.url));

/** Lease TTL: far longer than any round, so no lock lapses mid-pair and no keep-alive is needed. */
const LEASE_TTL_S = 60;

/** The two calls of etcd's `v3lockpb.Lock` service, as grpc-js makes them. */
interface LockServiceClient extends grpc.Client {
  Lock(request: { name: Buffer; lease: string }, callback: (err: grpc.ServiceError | null, answer?: { key: Buffer }) => void): void;
  Unlock(request: { key: Buffer }, callback: (err: grpc.ServiceError | null) => void): void;
}

function call<T>(run: (callback: (err: grpc.ServiceError | null, answer?: T) => void) => void): Promise<T | undefined> {
  return new Promise((resolve, reject) => run((err, answer) => (err ? reject(err) : resolve(answer))));
}

/** An etcd peer and the connections to close when the suite ends. */
export interface EtcdPeer {
  readonly driver: PeerDriver;
  close(): Promise<void>;
}

/**
 * etcd's own Lock/Unlock RPCs (the `v3lockpb.Lock` gRPC service, over one HTTP/2 channel) with a
 * lease, leases granted and revoked through the etcd3 npm client. A pair is `Lock(name, lease)`,
 * which waits inside etcd until the lock is free (etcd's concurrency mutex: an ownership key
 * `name/<lease>` is written, and the waiter watches the key just before it, so grants go in
 * revision order, first come first served), then `Unlock(key)`. Two round-trips, each a Raft write
 * fsynced to etcd's write-ahead log before it is answered.
 *
 * One lease per caller at a time: etcd's mutex keys a waiter by its lease, so two callers locking
 * one name with the same lease would both be told they hold it. A session keeps a pool of leases,
 * takes one per pair and puts it back after the unlock (64 callers: at most 64 leases).
 */
export function openEtcdPeer(endpoint: string): EtcdPeer {
  const definition = protoLoader.loadSync(PROTO, { longs: String, defaults: true });
  const { v3lockpb } = grpc.loadPackageDefinition(definition) as unknown as { v3lockpb: { Lock: new (address: string, credentials: grpc.ChannelCredentials) => LockServiceClient } };
  const locks = new v3lockpb.Lock(endpoint, grpc.credentials.createInsecure());
  const etcd = new Etcd3({ hosts: endpoint });
  let round = 0;
  const driver: PeerDriver = {
    name: "etcd",
    async session() {
      const prefix = `leasehold-bench/${round++}/k`;
      const idle: { lease: Lease; id: string }[] = [];
      const all: Lease[] = [];
      const take = async () => {
        const free = idle.pop();
        if (free !== undefined) return free;
        const lease = etcd.lease(LEASE_TTL_S, { autoKeepAlive: false });
        all.push(lease);
        return { lease, id: await lease.grant() };
      };
      return {
        async pair(key) {
          const held = await take();
          const answer = await call<{ key: Buffer }>((cb) => locks.Lock({ name: Buffer.from(`${prefix}${key}`), lease: held.id }, cb));
          const granted = nowNs();
          if (answer?.key === undefined) throw new Error(`etcd: Lock ${prefix}${key} answered without a key`);
          await call((cb) => locks.Unlock({ key: answer.key }, cb));
          idle.push(held);
          return granted;
        },
        async end() {
          await Promise.all(all.map((lease) => lease.revoke().catch(() => undefined)));
        },
      };
    },
  };
  return {
    driver,
    async close() {
      locks.close();
      etcd.close();
    },
  };
}
