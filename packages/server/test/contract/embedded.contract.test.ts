import { createLockService } from "../../src/service/create-lock-service.js";
import { lockServiceContract } from "./lock-service-contract.js";

lockServiceContract("embedded service", async ({ leaseMs }) => {
  const service = createLockService({ leaseMs });
  return { service, table: service, close: () => service.close() };
});
