import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";

/** A TCP echo server in a child process of its own (the floor standby of cluster-floor-trials.ts). */
export interface EchoServerProcess {
  readonly port: number;
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

/** Every byte read is written back at once, Nagle off: the cheapest peer a Node process can wait for. */
const ECHO_SOURCE = `
const net = require("node:net");
const server = net.createServer((c) => { c.setNoDelay(true); c.on("data", (d) => c.write(d)); c.on("error", () => {}); });
server.listen(0, "127.0.0.1", () => console.log(String(server.address().port)));
`;

/** Start the echo server on an ephemeral local port; resolves once it listens. */
export async function startEchoServer(): Promise<EchoServerProcess> {
  const child = spawn(process.execPath, ["-e", ECHO_SOURCE], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the echo server did not listen within 10 s")), 10_000);
    child.once("exit", (code) => reject(new Error(`the echo server exited with ${code} before listening`)));
    createInterface({ input: child.stdout! }).once("line", (line) => {
      clearTimeout(timer);
      resolve(Number(line));
    });
  }).catch((err: unknown) => {
    child.kill("SIGKILL");
    throw err;
  });
  return {
    port,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}
