import type { IncomingMessage } from "node:http";
import { LeaseholdError, LIMITS } from "@leasehold/protocol";

/** Thrown when the client went away while its body was being read: there is no one to answer. */
export class ClientGoneError extends Error {
  constructor() {
    super("the client closed the connection before its request body arrived");
    this.name = "ClientGoneError";
  }
}

function tooLarge(what: string): LeaseholdError {
  return new LeaseholdError(
    "PAYLOAD_TOO_LARGE",
    `request body ${what}; the limit is ${LIMITS.maxBodyBytes} bytes (send fewer locks or tokens per request)`,
    { limit: LIMITS.maxBodyBytes },
  );
}

/**
 * Read a request body into memory, refusing one over `limit` bytes without reading the rest: a
 * declared `content-length` over the limit is refused before the first byte is read, and a chunked
 * body is refused as soon as the bytes counted so far pass the limit. Either way the caller must
 * answer with `connection: close`, since the unread rest of the body is still on the socket.
 */
export function readBody(req: IncomingMessage, limit: number = LIMITS.maxBodyBytes): Promise<Buffer> {
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) > limit) {
    return Promise.reject(tooLarge(`declares ${declared} bytes`));
  }
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const cleanup = (): void => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("close", onClose);
    };
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > limit) {
        cleanup();
        req.pause();
        reject(tooLarge(`passed ${limit} bytes while streaming`));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(Buffer.concat(chunks, received));
    };
    const onError = (): void => {
      cleanup();
      reject(new ClientGoneError());
    };
    // 'close' without 'end' means the connection died mid-body.
    const onClose = (): void => {
      cleanup();
      if (req.complete) resolve(Buffer.concat(chunks, received));
      else reject(new ClientGoneError());
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("close", onClose);
  });
}
