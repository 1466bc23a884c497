import { afterEach, beforeEach } from "vitest";
import type { CliProcess } from "../support/cli-process.js";
import { createTestSchema, type TestSchema } from "./pg-schema.js";

/**
 * For the tests of the calling `describe`: a schema of its own before each test; after it, every
 * CLI process pushed to `running` is killed (SIGCONT first, so a SIGSTOPped one dies too), then the
 * schema is dropped.
 */
export function cliSchemaPerTest(): { readonly schema: TestSchema; readonly running: CliProcess[] } {
  let current: TestSchema | undefined;
  const running: CliProcess[] = [];
  beforeEach(async () => {
    current = await createTestSchema();
  });
  afterEach(async () => {
    for (const server of running.splice(0)) {
      server.child.kill("SIGCONT");
      server.child.kill("SIGKILL");
      await server.exited;
    }
    await current?.drop();
    current = undefined;
  });
  return {
    get schema(): TestSchema {
      if (current === undefined) throw new Error("cliSchemaPerTest: no schema outside a test");
      return current;
    },
    running,
  };
}
