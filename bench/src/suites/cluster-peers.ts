import type { Suite } from "../figures.js";
import { samePromiseFigures } from "../same-promise-figures.js";

/**
 * The part of `pnpm bench cluster` that measures the cluster beside the peers that make the same
 * promise (issue 32: Redis primary + replica with `WAIT 1`, etcd), alone: for checking it, or
 * rerunning only it. Needs PostgreSQL like `cluster`; only runs when named (`pnpm bench cluster-peers`).
 */
export const clusterPeersSuite: Suite = {
  name: "cluster-peers",
  description: "the cluster with and without a standby and the single server beside Redis primary + replica (WAIT 1) and etcd: c64, c1, server CPU per pair at a paced load",
  defaultOn: false,
  run: (ctx) => samePromiseFigures(ctx),
};
