import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/start-server.js";
import { errorOf, rawRequest } from "../support/raw-request.js";
import { exclusive } from "./support/batch-stream.js";

const BILLING = "billing-token-0123456789abcdef";

describe("lock-batch and lock-cancel go through admission like every operation", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ auth: { billing: [BILLING] } });
  });
  afterAll(async () => {
    await server.close();
  });

  const send = (ns: string, operation: string, body: unknown, token?: string) =>
    rawRequest(server.url, `/v1/namespaces/${ns}/${operation}`, {
      body: JSON.stringify(body),
      headers: { "content-type": "application/json", ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
    });

  it("without a token valid for the namespace: 401 before the body is looked at, and nothing runs", async () => {
    for (const [operation, body] of [["lock-batch", { requests: [exclusive("a")] }], ["lock-cancel", { requestId: "r" }]] as const) {
      const noToken = await send("billing", operation, body);
      expect(noToken.status).toBe(401);
      expect(errorOf(noToken).code).toBe("UNAUTHENTICATED");
      const otherNamespace = await send("orders", operation, body, BILLING);
      expect(otherNamespace.status).toBe(401);
    }
    expect(server.service.snapshot("billing").heldTokens).toBe(0);
  });

  it("with a valid token: the batch runs and cancel answers", async () => {
    const batch = await send("billing", "lock-batch", { requests: [exclusive("a", { requestId: "r" })] }, BILLING);
    expect(batch.status).toBe(200);
    expect(batch.headers["content-type"]).toBe("application/x-ndjson; charset=utf-8");
    const cancel = await send("billing", "lock-cancel", { requestId: "r" }, BILLING);
    expect(cancel.json).toEqual({ cancelled: true });
    expect(server.service.snapshot("billing").heldTokens).toBe(0);
  });
});
