import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { createLockService, startServer } from "@leasehold/server";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { LockClient, Mutex, type LockService } from "../src/index.js";
import { captureLogger } from "./support/capture-logger.js";
import { TEST_RETRY } from "./support/harness.js";

const spec = (descriptor: string) => [{ descriptor, mode: "exclusive" as const }];

describe("await using", () => {
  it("releases a granted lock at the end of its scope, then closes the client, then the server, in that order", async () => {
    let url = "";
    let outside: LockClient | undefined;
    let token = "";
    {
      await using server = await startServer();
      url = server.url;
      await using client = LockClient.http({ baseUrl: url, namespace: "using", logger: captureLogger().logger, retry: TEST_RETRY });
      outside = client;
      const other = LockClient.http({ baseUrl: url, namespace: "using", logger: captureLogger().logger, retry: TEST_RETRY });
      try {
        {
          await using res = await client.lock(spec("report"), { acquireTimeoutMs: 1_000 });
          if (res.status !== "acquired") throw new Error("expected the lock");
          token = res.token;
          expect(client.isHeld(token)).toBe(true);
          expect((await other.lock(spec("report"))).status).toBe("timeout");
        }
        // Disposal awaited the unlock: the lock is free the moment the scope is left.
        expect(client.isHeld(token)).toBe(false);
        const next = await other.lock(spec("report"));
        expect(next.status).toBe("acquired");
        await next[Symbol.asyncDispose]();
      } finally {
        await other.close();
      }
    }
    // The client was disposed of (closed) …
    await expect(outside!.lock(spec("x"))).rejects.toMatchObject({ code: "UNAVAILABLE", message: /closed/ });
    // … and the server too: nothing listens at its address any more.
    await expect(fetch(`${url}/v1/health`)).rejects.toThrow();
  });

  it("releases on a throw, once, and a timeout answer disposes of nothing", async () => {
    const service = createLockService({ leaseMs: 5_000 });
    const unlocks: string[][] = [];
    const counting: LockService = Object.assign(Object.create(service) as LockService, {
      unlock: (...args: Parameters<LockService["unlock"]>) => {
        unlocks.push([...args[1].tokens]);
        return service.unlock(...args);
      },
    });
    await using client = LockClient.embedded(counting, { namespace: "throw", logger: captureLogger().logger });
    let token = "";
    const failing = async (): Promise<void> => {
      await using res = await client.lock(spec("doc"));
      if (res.status === "acquired") token = res.token;
      throw new Error("work failed");
    };
    await expect(failing()).rejects.toThrow("work failed");
    expect(unlocks).toEqual([[token]]);
    expect(service.snapshot("throw").descriptors).toEqual([]);

    // Idempotent: a second disposal sends nothing.
    const res = await client.lock(spec("doc"));
    await res[Symbol.asyncDispose]();
    await res[Symbol.asyncDispose]();
    expect(unlocks).toHaveLength(2);

    // The timeout answer is disposable too, so `await using` works whatever the outcome.
    const holder = await client.lock(spec("busy"));
    {
      await using busy = await client.lock(spec("busy"));
      expect(busy).toEqual({ status: "timeout" });
    }
    expect(unlocks).toHaveLength(2);
    await holder[Symbol.asyncDispose]();
    await service.close();
  });

  it("a grant or recipe handle disposed of after its client closed does nothing (the lock lapses with its lease)", async () => {
    const service = createLockService({ leaseMs: 5_000 });
    const client = LockClient.embedded(service, { namespace: "late", logger: captureLogger().logger });
    const res = await client.lock(spec("doc"));
    const held = await new Mutex(client, "m").lock();
    expect(held.status).toBe("acquired");
    await client.close();
    await expect(res[Symbol.asyncDispose]()).resolves.toBeUndefined();
    await expect(held[Symbol.asyncDispose]()).resolves.toBeUndefined();
    expect(held.status === "acquired" && held.released).toBe(true);
    await service.close();
  });

  it("a recipe handle disposes once, through its grant: one unlock, and then it is released", async () => {
    const service = createLockService({ leaseMs: 5_000 });
    await using client = LockClient.embedded(service, { namespace: "handle", logger: captureLogger().logger });
    const held = await new Mutex(client, "m").lock();
    if (held.status !== "acquired") throw new Error("expected the mutex");
    await held[Symbol.asyncDispose]();
    await held[Symbol.asyncDispose]();
    expect(held.released).toBe(true);
    expect(await held.release()).toBe(false);
    expect(service.snapshot("handle").descriptors).toEqual([]);
    await service.close();
  });

  it("the answers still look, compare and serialise exactly as the protocol's", async () => {
    const service = createLockService({ leaseMs: 5_000 });
    await using client = LockClient.embedded(service, { namespace: "shape", logger: captureLogger().logger });
    const res = await client.lock(spec("doc"));
    expect(Object.keys(JSON.parse(JSON.stringify(res)) as object)).toEqual(["status", "token", "lease", "acquired"]);
    expect(res).toEqual({ status: "acquired", token: expect.any(String), lease: expect.any(Object), acquired: [{ descriptor: "doc", mode: "exclusive", fencingToken: expect.any(Number) }] });
    const timeout = await client.lock(spec("doc"));
    expect(JSON.stringify(timeout)).toBe('{"status":"timeout"}');
    await res[Symbol.asyncDispose]();
    await service.close();
  });

  it("TypeScript downlevels await using for the ES2022 target, and the program runs on this Node", async () => {
    const dist = pathToFileURL(fileURLToPath(new URL("../dist/index.js", import.meta.url))).href;
    const server = pathToFileURL(fileURLToPath(new URL("../../server/dist/index.js", import.meta.url))).href;
    const source = `
      import { LockClient } from ${JSON.stringify(dist)};
      import { startServer } from ${JSON.stringify(server)};
      const log: string[] = [];
      {
        await using srv = await startServer();
        await using client = LockClient.http({ baseUrl: srv.url, namespace: "tsc" });
        {
          await using res = await client.lock([{ descriptor: "d", mode: "exclusive" }]);
          log.push(res.status);
        }
        const again = await client.lock([{ descriptor: "d", mode: "exclusive" }]);
        log.push(again.status);
      }
      console.log(JSON.stringify(log));
    `;
    const out = ts.transpileModule(source, { compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext } });
    expect(out.outputText).not.toMatch(/\bawait using\b/); // lowered, not passed through
    expect(out.outputText).toMatch(/__addDisposableResource|__disposeResources/);
    const dir = await mkdtemp(join(tmpdir(), "leasehold-using-"));
    try {
      const file = join(dir, "program.mjs");
      await writeFile(file, out.outputText);
      const { stdout } = await promisify(execFile)(process.execPath, [file], { timeout: 20_000 });
      // Released at the end of the inner scope: the second lock was granted, not timed out.
      expect(JSON.parse(stdout.trim())).toEqual(["acquired", "acquired"]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
