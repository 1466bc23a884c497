import { describe, expect, it } from "vitest";
import { startServer } from "../../src/start-server.js";
import { waitFor } from "../support/wait-for.js";
import { BatchStream, codeOf, exclusive, resultOf } from "./support/batch-stream.js";
import { postJson } from "./support/post-json.js";

describe("lock-batch: server shutdown", () => {
  it("answers waiting entries UNAVAILABLE on their lines, ends the answer, and close() resolves", async () => {
    const server = await startServer();
    await postJson(server.url, "ns", "lock", exclusive("busy"));
    const batch = new BatchStream(server.url, "ns", { requests: [exclusive("busy", { acquireTimeoutMs: 30_000 }), exclusive("free"), exclusive("busy", { acquireTimeoutMs: 30_000 })] });
    await waitFor(() => server.service.snapshot("ns").waitingRequests === 2, "two entries to wait");
    await server.close();
    const lines = await batch.done;
    const byIndex = new Map(lines.map((l) => [l.index, l]));
    expect(resultOf(byIndex.get(1)!).status).toBe("acquired");
    expect(codeOf(byIndex.get(0)!)).toBe("UNAVAILABLE");
    expect(codeOf(byIndex.get(2)!)).toBe("UNAVAILABLE");
  });
});
