// The CommonJS build's require-dependency (scripts/build-dual.mjs puts this file's output in
// dist/cjs/ in place of require-dependency.ts's). The same loaders, with a plain `require` of each
// package by name: a bundler (esbuild, webpack) given a CommonJS program sees these calls and
// carries undici and pino in the bundle, which then runs where there is no node_modules. Still
// inside functions, so an embedded client never loads undici, nor a client given a logger pino.

/** undici (the HTTP transport), loaded on first use. */
function loadUndici(): typeof import("undici") {
  return require("undici") as typeof import("undici");
}

/** pino (the default logger), loaded on first use. */
function loadPino(): typeof import("pino") {
  return require("pino") as typeof import("pino");
}

export = { loadUndici, loadPino };
