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
 * How many bytes of an oversized body are read and thrown away before it is answered 413 (8 MiB):
 * a connection closed with unread bytes on it is reset, and a client still sending then sees the
 * reset instead of the answer (TCP discards what it had received). Bodies up to the limit plus
 * this are read to their end, so the 413 reaches a client that sends first and reads after; past
 * it the server stops reading (it must not be made to read without end) and answers at once.
 */
export const DISCARD_LIMIT_BYTES = 8 * 1024 * 1024;

/**
 * Read a request body into memory, refusing one over `limit` bytes: its bytes past the limit are
 * not kept, and the refusal comes once the body ended, or once `discard` bytes more were thrown
 * away (a declared `content-length` over `limit + discard` is refused before the first byte is
 * read). The caller answers with `connection: close` either way: the client may have more to send.
 */
export function readBody(req: IncomingMessage, limit: number = LIMITS.maxBodyBytes, discard: number = DISCARD_LIMIT_BYTES): Promise<Buffer> {
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) > limit + discard) {
    return Promise.reject(tooLarge(`declares ${declared} bytes`));
  }
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    /** Set once the body is known to be too large: bytes are counted and dropped until it ends. */
    let refusal: LeaseholdError | null = declared !== undefined && Number(declared) > limit ? tooLarge(`declares ${declared} bytes`) : null;
    const cleanup = (): void => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("close", onClose);
    };
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (refusal === null && received > limit) {
        refusal = tooLarge(`passed ${limit} bytes while streaming`);
        chunks.length = 0;
      }
      if (refusal === null) chunks.push(chunk);
      else if (received > limit + discard) {
        cleanup();
        req.pause();
        reject(refusal);
      }
    };
    const onEnd = (): void => {
      cleanup();
      if (refusal !== null) reject(refusal);
      else resolve(Buffer.concat(chunks, received));
    };
    const onError = (): void => {
      cleanup();
      reject(new ClientGoneError());
    };
    // 'close' without 'end' means the connection died mid-body.
    const onClose = (): void => {
      cleanup();
      if (!req.complete) reject(new ClientGoneError());
      else if (refusal !== null) reject(refusal);
      else resolve(Buffer.concat(chunks, received));
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("close", onClose);
  });
}
