import { clientSuite } from "./support/client-suite.js";
import { httpBatchedHarness } from "./support/harness.js";

clientSuite("http, lockBatching", httpBatchedHarness);
