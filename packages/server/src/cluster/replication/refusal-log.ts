import type { IncomingMessage } from "node:http";
import type { Logger } from "pino";
import type { ClusterAuthRefusal } from "./cluster-key.js";

/** One refusal log line per kind per this many ms at most; the rest are counted in the next line of that kind. */
const LOG_EVERY_MS = 1_000;

/**
 * The log of refused server-to-server authentications (the replication route and the replication
 * stream): every refusal is counted through `onUnauthenticated`, and logged with the remote
 * address, the path, the reason and whether a client bearer token was presented, at most once a
 * second per kind of refusal (so a flood of one kind never hides another), with the number
 * suppressed since the last line of that kind.
 */
export function createRefusalLog(
  logger: Logger,
  wallClock: () => number,
  onUnauthenticated: ((reason: ClusterAuthRefusal) => void) | undefined,
): (req: IncomingMessage, path: string, reason: ClusterAuthRefusal) => void {
  const lastLogged = new Map<string, { at: number; suppressed: number }>();
  return (req, path, reason) => {
    onUnauthenticated?.(reason);
    const now = wallClock();
    const bearer = req.headers.authorization !== undefined;
    const kind = `${reason}${bearer ? " with a bearer token" : ""}`;
    const last = lastLogged.get(kind);
    if (last !== undefined && now - last.at < LOG_EVERY_MS) {
      last.suppressed++;
      return;
    }
    lastLogged.set(kind, { at: now, suppressed: 0 });
    logger.warn(
      {
        remoteAddress: req.socket.remoteAddress ?? null,
        path: path.slice(0, 200),
        reason,
        bearerToken: bearer,
        suppressed: last?.suppressed ?? 0,
      },
      "replication request refused: not signed with the cluster key",
    );
  };
}
