/**
 * A child process for `pnpm bench:breakdown`: the baselines a leasehold request is compared with.
 * `node echo-server.js tcp` echoes every byte it receives on a TCP socket (the wire and two event
 * loops, nothing else); `node echo-server.js http` is a bare `node:http` server that reads each
 * request body and answers a canned leasehold answer of the real size (a `lock` grant with a new
 * token each time, `{"unlocked":[]}` to an unlock), with the same headers as the lock server
 * (`content-type`, `content-length`, `cache-control`): what `node:http` and the wire cost without
 * any leasehold code. Prints `{"port":n}` on stdout once listening.
 */
import { createServer as createHttpServer } from "node:http";
import { createServer as createTcpServer, type AddressInfo } from "node:net";

const mode = process.argv[2];
let counter = 0;

/** A grant as the lock server writes it (203 bytes for a one-lock grant). */
function grant(): string {
  const token = `echo${String(counter++).padStart(20, "0")}`;
  return `{"status":"acquired","token":"${token}","lease":{"leaderId":"d1913b1c-0e2d-49cb-9027-741ab63115bd","validForMs":5000},"acquired":[{"descriptor":"k1","mode":"exclusive","fencingToken":${counter}}]}`;
}

if (mode === "tcp") {
  const server = createTcpServer((socket) => {
    socket.setNoDelay(true);
    socket.on("data", (chunk) => socket.write(chunk));
  });
  server.listen(0, "127.0.0.1", () => console.log(JSON.stringify({ port: (server.address() as AddressInfo).port })));
} else if (mode === "http") {
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.from(req.url!.endsWith("/lock") ? grant() : '{"unlocked":[]}', "utf8");
      res.writeHead(200, { "content-type": "application/json; charset=utf-8", "content-length": String(body.length), "cache-control": "no-store" });
      res.end(body);
    });
  });
  server.keepAliveTimeout = 30_000;
  server.listen(0, "127.0.0.1", () => console.log(JSON.stringify({ port: (server.address() as AddressInfo).port })));
} else {
  console.error("usage: echo-server.js tcp|http");
  process.exit(2);
}
