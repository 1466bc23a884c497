import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { LeaseholdError } from "@leasehold/protocol";
import type { ExtraHeaders } from "../support/send-json.js";

/**
 * The status page's files (packages/server/ui, shipped in the package) and their content types.
 * `GET /ui` is `index.html`; any other path under `/ui/` is no route at all (404 for any method).
 */
export const STATUS_PAGE_FILES: Readonly<Record<string, string>> = {
  "index.html": "text/html; charset=utf-8",
  "status-page.css": "text/css; charset=utf-8",
  "status-page.js": "text/javascript; charset=utf-8",
  "charts.js": "text/javascript; charset=utf-8",
  "render.js": "text/javascript; charset=utf-8",
  "cluster-view.js": "text/javascript; charset=utf-8",
};

/**
 * Nothing but the server's own files, and requests only to the server itself: the page works
 * offline, and an injected string can neither run script nor send a typed token elsewhere.
 */
const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  // Revalidated at every load, so an upgraded server never runs with an old page.
  "cache-control": "no-cache",
} as const;

const UI_DIR = new URL("../../ui/", import.meta.url);
const cache = new Map<string, Buffer>();

function load(name: string): Buffer {
  let body = cache.get(name);
  if (body === undefined) {
    body = readFileSync(new URL(name, UI_DIR));
    cache.set(name, body);
  }
  return body;
}

/**
 * Serve the status page: `GET /ui` (and `/ui/`) is its HTML, `/ui/<file>` its script and style.
 * Read from the package once and kept in memory; nothing is fetched from elsewhere at run time.
 * The page itself carries no data and needs no credential: it asks for a bearer token when the
 * API calls it makes are refused, and sends that token with each of them.
 */
export function serveStatusPage(req: IncomingMessage, res: ServerResponse, file: string, headers: ExtraHeaders): void {
  const name = file === "" ? "index.html" : file;
  const type = STATUS_PAGE_FILES[name];
  // The router only matches the page's own files; this guards a caller that did not.
  if (type === undefined) throw new LeaseholdError("NOT_FOUND", `no file ${JSON.stringify(name.slice(0, 100))} in the status page; it is served at /ui`, {});
  const body = load(name);
  res.writeHead(200, { ...headers, ...SECURITY_HEADERS, "content-type": type, "content-length": String(body.length) });
  res.end(req.method === "HEAD" ? undefined : body);
}
