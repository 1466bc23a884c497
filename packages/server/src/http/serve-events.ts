import type { IncomingMessage, ServerResponse } from "node:http";
import { LeaseholdError } from "@leasehold/protocol";
import { sendJson, type ExtraHeaders } from "../support/send-json.js";
import { queryOf } from "./query-of.js";
import type { InspectionContext } from "./serve-inspection.js";

function bad(name: string, message: string): never {
  throw new LeaseholdError("INVALID_ARGUMENT", `query parameter ${name} ${message}`, { path: `query.${name}` });
}

/** Parse `?after=<seq>`: the only parameter, at most once, decimal digits. Default 0 (every event kept). */
function parseAfter(url: string | undefined): number {
  let after = 0;
  let seen = false;
  for (const [name, value] of queryOf(url)) {
    if (name !== "after") bad(JSON.stringify(name).slice(1, -1).slice(0, 64), "is not a known parameter of GET /v1/events (known: after)");
    if (seen) bad("after", "is given more than once");
    seen = true;
    if (!/^\d{1,16}$/.test(value) || !Number.isSafeInteger(Number(value))) bad("after", `must be the nextSeq of an earlier answer: decimal digits (got ${JSON.stringify(value.slice(0, 64))})`);
    after = Number(value);
  }
  return after;
}

/**
 * Serve `GET /v1/events` (docs/protocol.md "Activity feed"): lapses and revocations after `after`
 * in the namespaces the credential may see, the per-second grant and wait history when it may see
 * every namespace (the history covers them all), and whether it may revoke, so the status page
 * shows its revoke buttons only to admins. Admission has already checked the credential is valid.
 */
export function serveEvents(req: IncomingMessage, res: ServerResponse, context: InspectionContext, headers: ExtraHeaders): void {
  const feed = context.service.activity;
  if (feed === undefined) throw new LeaseholdError("NOT_FOUND", "this server keeps no activity feed", {});
  const after = parseAfter(req.url);
  const { auth } = context;
  const scopes = auth?.scopes(req.headers.authorization) ?? null;
  if (auth !== undefined && scopes === null) throw new LeaseholdError("UNAUTHENTICATED", "this server requires a bearer token");
  const everywhere = auth === undefined || scopes?.everywhere === true;
  const visible = everywhere || scopes === null ? undefined : (ns: string): boolean => scopes.namespaces.has(ns);
  const canRevoke = auth === undefined ? context.allowAdminWithoutAuth : scopes?.admin === true;
  sendJson(res, 200, { ...feed.page(after, visible, everywhere), canRevoke }, headers);
}
