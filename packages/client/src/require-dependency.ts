import { createRequire } from "node:module";

/**
 * `require` for the client's CommonJS dependencies that it loads only when needed (undici for the
 * HTTP transport, pino for the default logger), resolved from this file as an import would be.
 *
 * Why not a plain `import`: a bundler (esbuild, for Node, with ESM output) would inline those
 * CommonJS packages, and their own `require("node:os")`-style calls then fail at run time with
 * `Dynamic require of "node:os" is not supported`. Loaded this way they stay outside the bundle and
 * are found in node_modules, as Node finds any dependency; an embedded client never loads undici,
 * and a client given a logger never loads pino. The CommonJS build gets the same function, with
 * `import.meta.url` standing for its own file (scripts/build-dual.mjs).
 */
export const requireDependency: (id: string) => unknown = createRequire(import.meta.url);
