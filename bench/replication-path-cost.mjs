// Probe (not part of the suite): the CPU one replication message costs each end of the stream, in
// process (no sockets, no event loop), for a message per lock + unlock pair, as at a paced load where
// each turn carries one grant and the release before it. Standby: the frame read and its MAC checked,
// the JSON parsed and checked, the grant and the release applied to a replica table, the answer frame
// made. Leader: the frame made (JSON, MAC), the answer frame read. The entries are a real leader
// table's (lock with a requestId, then unlock, on 64 keys). User + system CPU of this process over
// the whole run, divided by the messages: robust on a busy machine where wall-clock figures are not
// (run it a few times and take the lowest).
// Usage (after `pnpm build`): node bench/replication-path-cost.mjs [standby|leader] [dist] [pairs=30000]
//   dist: a build's packages/server/dist (default this worktree's); one older than leasehold-replication/2
//   is measured with its own format (the stream in every message, one answer frame per message).
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";

const mode = process.argv[2] ?? "standby";
const root = process.argv[3] ?? fileURLToPath(new URL("../packages/server/dist", import.meta.url));
const N = Number(process.argv[4] ?? 30_000);
const load = (path) => import(`${root}/${path}`);
const { InMemoryLockService } = await load("service/in-memory-lock-service.js");
const { FrameWriter, FrameReader, STREAM_PROTOCOL } = await load("cluster/replication/stream-frames.js");
const { parseReplicationMessage } = await load("cluster/replication/replication-wire.js");
const { ReplicaStore } = await load("cluster/replication/replica-store.js");
const { ShardReplicaSink } = await load("cluster/replication/replicated-tables.js");
const v2 = STREAM_PROTOCOL !== "leasehold-replication/1";
const codec = v2 ? await load("cluster/replication/stream-replication-codec.js") : null;

const leader = new InMemoryLockService({ leaderId: "L5", leaseMs: 60_000 });
const entries = [];
leader.setReplicationSink((ns, entry) => entries.push({ ns, entry }));
for (let i = 0; i < N; i++) {
  const r = await leader.lock("paced", { locks: [{ descriptor: `k${i % 64}`, mode: "exclusive" }], requestId: `req-${i}-abcdefgh` });
  await leader.unlock("paced", { tokens: [r.token] });
}
const stream = { shard: 0, epoch: 3, leaderId: "L5", leaderIncarnation: "0f4c2a7e-1c1a-4c5b-9a5e-2f3b4c5d6e7f", standbyIncarnation: "1f4c2a7e-1c1a-4c5b-9a5e-2f3b4c5d6e7f", streamId: "a1b2c3d4-e5f6-a7b8-c9d0-111122223333" };
const msgs = [{ kind: "snapshot", stream, seq: 0, snapshot: { namespaces: {} } }];
for (let i = 0; i < N; i++) msgs.push({ kind: "entries", stream, fromSeq: 2 * i, entries: [entries[2 * i], entries[2 * i + 1]] });
const valueOf = (m, i) => (codec === null ? m : codec.toStandbyValue(m, i === 0 ? null : stream));
const answerOf = (seq) => (v2 ? [seq] : { ackedSeq: seq });
const key = randomBytes(32);
const cpu = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

if (mode === "standby") {
  const frames = (() => {
    const w = new FrameWriter(key, "to-standby");
    return msgs.map((m, i) => w.frame(valueOf(m, i)));
  })();
  const store = new ReplicaStore({
    incarnation: stream.standbyIncarnation,
    shards: () => 1,
    rowEpoch: () => 3,
    createSink: () => new ShardReplicaSink(new InMemoryLockService({ replica: true, leaderId: "L5", leaseMs: 60_000 })),
  });
  const reader = new FrameReader(key, "to-standby", 1 << 26);
  const writer = new FrameWriter(key, "to-leader");
  let previous = null;
  const t0 = cpu();
  for (const frame of frames) {
    for (const value of reader.push(frame)) {
      const parsed = v2 ? parseReplicationMessage(value, 0, previous) : parseReplicationMessage(value, 0);
      const message = codec?.expandEntries === undefined ? parsed : codec.expandEntries(parsed);
      previous = message.stream;
      writer.frame(answerOf(store.receive(message).ackedSeq));
    }
  }
  const us = (cpu() - t0) / N;
  if (reader.failure !== null) throw reader.failure;
  if (store.get(0).appliedSeq !== 2 * N) throw new Error(`applied ${store.get(0).appliedSeq}, not ${2 * N}`);
  console.log(`standby, ${STREAM_PROTOCOL}: ${us.toFixed(2)} µs CPU per message (one grant + one release)`);
} else {
  const answers = (() => {
    const w = new FrameWriter(key, "to-leader");
    return msgs.map((_, i) => w.frame(answerOf(2 * i)));
  })();
  const writer = new FrameWriter(key, "to-standby");
  const reader = new FrameReader(key, "to-leader", 1 << 20);
  const t0 = cpu();
  for (let i = 0; i < msgs.length; i++) {
    writer.frame(valueOf(msgs[i], i));
    reader.push(answers[i]);
  }
  const us = (cpu() - t0) / N;
  if (reader.failure !== null) throw reader.failure;
  console.log(`leader, ${STREAM_PROTOCOL}: ${us.toFixed(2)} µs CPU per message (frame out, answer in)`);
}
