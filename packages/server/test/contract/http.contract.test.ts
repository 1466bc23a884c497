import { startServer } from "../../src/start-server.js";
import { HttpLockService } from "../support/http-lock-service.js";
import { lockServiceContract } from "./lock-service-contract.js";

lockServiceContract("HTTP server over real sockets", async ({ leaseMs }) => {
  const server = await startServer({ leaseMs });
  return { service: new HttpLockService(server.url), table: server.service, close: () => server.close() };
});
