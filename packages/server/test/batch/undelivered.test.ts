import type { LockRequest } from "@leasehold/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeLockService } from "../support/fake-lock-service.js";
import { sleep, waitFor } from "../support/wait-for.js";
import { BatchStream, exclusive } from "./support/batch-stream.js";
import { fakeGrant, serveFake } from "./support/fake-service-server.js";

describe("lock-batch: grants whose line could not be written", () => {
  let service: FakeLockService;
  let server: { readonly url: string; close(): Promise<void> };
  let url: string;

  beforeEach(async () => {
    service = new FakeLockService();
    server = await serveFake(service);
    url = server.url;
  });
  afterEach(() => server.close());

  it("a grant without a requestId that lands after the client left is released; one with a requestId is kept; a flushed line is kept", async () => {
    let land!: () => void;
    const landed = new Promise<void>((r) => (land = r));
    service.onLock = async (request: LockRequest) => {
      const name = request.locks[0]?.descriptor ?? "?";
      if (name !== "at-once") await landed;
      return fakeGrant(`tok-${name}`);
    };
    const batch = new BatchStream(url, "ns", {
      requests: [exclusive("at-once"), exclusive("late-anonymous"), exclusive("late-with-id", { requestId: "r" })],
    });
    const first = await batch.next();
    expect(first.index).toBe(0);
    batch.req.destroy();
    await sleep(50);
    land();
    await waitFor(() => service.unlocked.length === 1, "the undelivered grant to be released");
    await sleep(50);
    // Only the anonymous late grant: "at-once" reached the client, "late-with-id" can be recovered by a retry.
    expect(service.unlocked).toEqual([["tok-late-anonymous"]]);
  });
});
