import type { Socket } from "node:net";
import { LeaseholdError } from "@leasehold/protocol";

/** Node's own marker of the answer a socket is writing, if any (internal, read-only here). */
type HttpSocket = Socket & { readonly _httpMessage?: object | null | undefined };

function reasonOf(code: string | undefined, message: string): string {
  if (code === "HPE_HEADER_OVERFLOW") return "its headers are too large";
  if (code === "ERR_HTTP_REQUEST_TIMEOUT") return "it did not arrive in time";
  return `it is not valid HTTP/1.1 (${code ?? message})`;
}

/**
 * `clientError` listener: a request so malformed that node's HTTP parser gave up (bad request line,
 * broken chunked encoding, oversized headers, a client too slow to send its headers). Node's default
 * answers a bare `400` with no body; this one keeps the protocol's promise that every non-2xx
 * answer carries `{ error: { code, message, details } }`.
 */
export function handleClientError(err: Error & { code?: string | undefined }, socket: Socket): void {
  // With an answer pending on the socket (a pipelined request behind a long poll), raw bytes would
  // be read as that answer: close instead.
  const busy = (socket as HttpSocket)._httpMessage;
  if (err.code === "ECONNRESET" || !socket.writable || busy) {
    socket.destroy();
    return;
  }
  const error = new LeaseholdError("INVALID_ARGUMENT", `the request could not be parsed: ${reasonOf(err.code, err.message)}`, {
    parser: err.code ?? null,
  });
  const body = JSON.stringify(error.toJSON());
  socket.end(
    `HTTP/1.1 400 Bad Request\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}
