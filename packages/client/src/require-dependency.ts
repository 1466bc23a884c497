import { createRequire } from "node:module";

const requireHere = createRequire(import.meta.url);

/**
 * undici (the HTTP transport), loaded on first use rather than imported; an embedded client never
 * loads it. This is the ES module build's way; the CommonJS build has its own
 * (require-dependency.cts), which `require`s the package by name.
 *
 * Why not a plain `import` here: a bundler (esbuild, for Node, with ESM output) would inline this
 * CommonJS package, and its own `require("node:os")`-style calls then fail at run time with
 * `Dynamic require of "node:os" is not supported`. Loaded through `createRequire(import.meta.url)`
 * it stays outside an ESM bundle and is found in node_modules, as Node finds any dependency.
 * A CommonJS bundle has no such problem, so there the plain `require` lets the bundler carry it.
 */
export function loadUndici(): typeof import("undici") {
  return requireHere("undici") as typeof import("undici");
}

/** pino (the default logger), loaded on first use, as {@link loadUndici} loads undici and for the same reasons; a client given a logger never loads it. */
export function loadPino(): typeof import("pino") {
  return requireHere("pino") as typeof import("pino");
}
