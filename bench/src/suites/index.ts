import type { Suite } from "../figures.js";
import { clientSuite } from "./client.js";
import { clusterSuite } from "./cluster.js";
import { clusterFloorSuite } from "./cluster-floor.js";
import { clusterPeersSuite } from "./cluster-peers.js";
import { engineSuite } from "./engine.js";
import { httpSuite } from "./http.js";
import { inspectionSuite } from "./inspection.js";
import { memorySuite } from "./memory.js";
import { observabilitySuite } from "./observability.js";
import { peersSuite } from "./peers.js";
import { txnSuite } from "./txn.js";

/** Every suite, in the order `pnpm bench` runs them; `peers`, `cluster`, `cluster-peers` and `cluster-floor` only run when named. */
export const SUITES: readonly Suite[] = [engineSuite, memorySuite, httpSuite, clientSuite, observabilitySuite, txnSuite, inspectionSuite, peersSuite, clusterSuite, clusterPeersSuite, clusterFloorSuite];
