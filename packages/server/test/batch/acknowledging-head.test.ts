import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeLockService } from "../support/fake-lock-service.js";
import { sleep } from "../support/wait-for.js";
import { BatchStream, exclusive } from "./support/batch-stream.js";
import { fakeGrant, serveFake } from "./support/fake-service-server.js";

describe("lock-batch: when its head leaves", () => {
  let service: FakeLockService;
  let server: { readonly url: string; close(): Promise<void> };
  let url: string;
  let land: () => void;

  beforeEach(async () => {
    service = new FakeLockService();
    const landed = new Promise<void>((r) => (land = r));
    let n = 0;
    service.onLock = async () => {
      const token = `t${n++}`;
      await landed;
      return fakeGrant(token);
    };
    server = await serveFake(service);
    url = server.url;
  });
  afterEach(() => server.close());

  it("entries that wait for locks: the head leaves at once, before any line", async () => {
    const batch = new BatchStream(url, "ns", { requests: [exclusive("a"), exclusive("b")] });
    await batch.head;
    expect(batch.status).toBe(200);
    land();
    expect((await batch.done).map((l) => l.index).sort()).toEqual([0, 1]);
  });

  it("entries granted and only waiting for the standby's acknowledgement: the head leaves with their lines, not before", async () => {
    service.acknowledging = true;
    const batch = new BatchStream(url, "ns", { requests: [exclusive("a"), exclusive("b")] });
    const first = await Promise.race([batch.head.then(() => "head"), sleep(200).then(() => "nothing yet")]);
    expect(first).toBe("nothing yet");
    land();
    await batch.head;
    expect(batch.status).toBe(200);
    expect((await batch.done).map((l) => l.index).sort()).toEqual([0, 1]);
  });
});
