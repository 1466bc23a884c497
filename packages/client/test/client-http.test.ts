import { clientSuite } from "./support/client-suite.js";
import { httpHarness } from "./support/harness.js";

clientSuite("http", httpHarness);
