import type { IncomingMessage, ServerResponse } from "node:http";
import { LeaseholdError, parseNamespaceLocksQuery, parseNamespacesQuery } from "@leasehold/protocol";
import type { EmbeddedLockService } from "../service/embedded-lock-service.js";
import { readBody } from "../support/read-body.js";
import { sendJson, type ExtraHeaders } from "../support/send-json.js";
import type { BearerAuth } from "./bearer-auth.js";
import { checkContentType } from "./check-content-type.js";
import { decodeNamespace } from "./decode-namespace.js";
import { parseJsonBody } from "./parse-json-body.js";
import { queryOf } from "./query-of.js";

/** What the inspection and revoke routes need from the server (docs/protocol.md "Inspection and revoke"). */
export interface InspectionContext {
  readonly service: EmbeddedLockService;
  /** The bearer-token checker; absent when authentication is off. */
  readonly auth: BearerAuth | undefined;
  /** Serve revoke without authentication configured (`--allow-admin-without-auth`). */
  readonly allowAdminWithoutAuth: boolean;
}

/** The routes this module serves, already matched and admitted (authentication passed). */
export type InspectionRoute =
  | { readonly kind: "namespaces" }
  | { readonly kind: "locks"; readonly rawNamespace: string }
  | { readonly kind: "revoke"; readonly rawNamespace: string };

const NO_ADMIN_WITHOUT_AUTH = new LeaseholdError(
  "PERMISSION_DENIED",
  'revoke needs an admin credential, and this server has no authentication configured: give it an auth table with an "@admin" token (--auth-file or LEASEHOLD_AUTH_TOKENS), or start it with --allow-admin-without-auth on a trusted network',
  { needs: "admin" },
);
const NOT_ADMIN = new LeaseholdError(
  "PERMISSION_DENIED",
  'revoke needs an admin credential: a bearer token listed under "@admin" in the server\'s auth table; this token is valid but is not an admin\'s',
  { needs: "admin" },
);

/**
 * Serve `GET /v1/namespaces`, `GET /v1/namespaces/{namespace}/locks` and `POST …/revoke`. Checks
 * run in this order: the admin permission (403, revoke only: it says nothing about the
 * namespace), the namespace (400), query parameters (400 naming `query.<name>`), then for revoke
 * content type (415), size (413), JSON (400) and the body's rules (400).
 */
export async function serveInspection(
  req: IncomingMessage,
  res: ServerResponse,
  route: InspectionRoute,
  context: InspectionContext,
  headers: ExtraHeaders,
): Promise<void> {
  const { service, auth } = context;
  switch (route.kind) {
    case "namespaces": {
      const query = parseNamespacesQuery(queryOf(req.url));
      // Admission let only a valid credential through; it sees the namespaces it may use.
      const scopes = auth?.scopes(req.headers.authorization);
      if (scopes === null) throw new LeaseholdError("UNAUTHENTICATED", "this server requires a bearer token");
      const visible = scopes === undefined || scopes.everywhere ? undefined : (ns: string) => scopes.namespaces.has(ns);
      sendJson(res, 200, service.inspectNamespaces(query, visible), headers);
      return;
    }
    case "locks": {
      const namespace = decodeNamespace(route.rawNamespace);
      const query = parseNamespaceLocksQuery(queryOf(req.url));
      sendJson(res, 200, await service.inspectLocks(namespace, query), headers);
      return;
    }
    case "revoke": {
      if (auth === undefined) {
        if (!context.allowAdminWithoutAuth) throw NO_ADMIN_WITHOUT_AUTH;
      } else if (auth.scopes(req.headers.authorization)?.admin !== true) throw NOT_ADMIN;
      const namespace = decodeNamespace(route.rawNamespace);
      checkContentType(req.headers["content-type"], false);
      const raw = await readBody(req);
      if (raw.length === 0) throw new LeaseholdError("INVALID_ARGUMENT", "revoke request: the body is empty; send a JSON object", { path: "(body)" });
      const body = parseJsonBody(raw);
      sendJson(res, 200, await service.revoke(namespace, body, { client: req.socket.remoteAddress }), headers);
      return;
    }
  }
}
