import type { ServerResponse } from "node:http";
import { LeaseholdError } from "@leasehold/protocol";

/** Extra response headers, for example `allow` on a 405. */
export type ExtraHeaders = Readonly<Record<string, string>>;

/** True while an answer can still be written: headers not sent and the socket not gone. */
export function canAnswer(res: ServerResponse): boolean {
  return !res.headersSent && !res.destroyed && !res.writableEnded;
}

/**
 * Write a JSON answer. `cache-control: no-store` because every answer (tokens, leases, timestamps)
 * is single-use; `content-length` because a fixed body lets keep-alive clients reuse the socket.
 *
 * @returns a promise settled when the answer was handed to the OS (`true`) or the socket closed
 * first (`false`): the caller of a grant needs to know which.
 */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: ExtraHeaders = {}): Promise<boolean> {
  const payload = Buffer.from(JSON.stringify(body), "utf8");
  return new Promise((resolve) => {
    if (res.destroyed) {
      resolve(false);
      return;
    }
    res.once("close", () => resolve(res.writableFinished));
    res.writeHead(status, {
      ...headers,
      "content-type": "application/json; charset=utf-8",
      "content-length": String(payload.length),
      "cache-control": "no-store",
    });
    res.end(payload);
  });
}

/** Write a {@link LeaseholdError} as `{ error: { code, message, details } }` with its status. */
export function sendError(res: ServerResponse, err: LeaseholdError, headers: ExtraHeaders = {}): Promise<boolean> {
  return sendJson(res, err.status, err.toJSON(), headers);
}
