import { afterAll, beforeAll, describe } from "vitest";
import { locksContract } from "./locks-contract.js";
import { tokensContract } from "./tokens-contract.js";
import { timestampsContract } from "./timestamps-contract.js";
import { waitsAndLeasesContract } from "./waits-and-leases-contract.js";
import type { ContractFactory, ContractTarget } from "./contract-target.js";

/**
 * The protocol's observable rules as one suite, written once and run against every
 * implementation of `LockService` (embedded, HTTP). Each test uses its own namespace, so the
 * tests share one target; the lease-lapse tests build their own with a short lease.
 */
export function lockServiceContract(name: string, factory: ContractFactory): void {
  describe(`LockService contract: ${name}`, () => {
    let target: ContractTarget | undefined;
    const get = (): ContractTarget => {
      if (!target) throw new Error("target not started");
      return target;
    };
    beforeAll(async () => {
      target = await factory({});
    });
    afterAll(async () => {
      await target?.close();
    });
    locksContract(get);
    tokensContract(get, factory);
    timestampsContract(get);
    waitsAndLeasesContract(get, factory);
  });
}
