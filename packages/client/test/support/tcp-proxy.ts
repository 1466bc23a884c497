import { createServer, connect, type Socket } from "node:net";
import type { AddressInfo } from "node:net";

/**
 * A TCP proxy in front of a real server, to make the network misbehave: `freeze()` stops
 * forwarding (requests hang, as with a stalled server or a partition) and `dropAnswer(pattern)`
 * lets the next request matching `pattern` reach the server but cuts the connection instead of
 * delivering the answer (the grant happened, the client never saw it).
 */
export async function tcpProxy(targetPort: number): Promise<{
  url: string;
  freeze: () => void;
  dropAnswer: (pattern: string) => void;
  delayAnswers: (ms: number) => void;
  delayClose: (ms: number) => void;
  /** Monotonic time (performance.now) each request carrying `pattern` was forwarded. */
  forwarded: (pattern: string) => number[];
  close: () => Promise<void>;
}> {
  let frozen = false;
  let dropPattern: string | undefined;
  let answerDelayMs = 0;
  let closeDelayMs = 0;
  const log: { at: number; text: string }[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(targetPort, "127.0.0.1");
    sockets.add(client).add(upstream);
    let dropThisAnswer = false;
    client.on("data", (chunk: Buffer) => {
      if (frozen) return;
      const text = chunk.toString("latin1");
      log.push({ at: performance.now(), text });
      if (dropPattern !== undefined && text.includes(dropPattern)) {
        dropPattern = undefined;
        dropThisAnswer = true;
      }
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => {
      if (frozen) return;
      if (dropThisAnswer) {
        client.destroy();
        upstream.destroy();
        return;
      }
      if (answerDelayMs === 0) client.write(chunk);
      // Same delay for every chunk, so timers keep them in order.
      else setTimeout(() => frozen || client.destroyed || client.write(chunk), answerDelayMs);
    });
    const end = (): void => {
      client.destroy();
      upstream.destroy();
    };
    const clientEnded = (): void => {
      if (closeDelayMs === 0) end();
      else setTimeout(end, closeDelayMs);
    };
    client.on("close", clientEnded).on("error", clientEnded);
    upstream.on("close", end).on("error", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    freeze: () => {
      frozen = true;
    },
    dropAnswer: (pattern) => {
      dropPattern = pattern;
    },
    delayAnswers: (ms) => {
      answerDelayMs = ms;
    },
    delayClose: (ms) => {
      closeDelayMs = ms;
    },
    forwarded: (pattern) => log.filter((l) => l.text.includes(pattern)).map((l) => l.at),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
