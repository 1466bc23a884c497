import { clientSuite } from "./support/client-suite.js";
import { embeddedHarness } from "./support/harness.js";

clientSuite("embedded", embeddedHarness);
