import { fileURLToPath } from "node:url";

/**
 * The lock server's CLI, as `pnpm build` leaves it. The same relative path works from
 * `src/crashes/` (tests run the TypeScript) and from `dist/crashes/` (compiled children).
 */
export const SERVER_CLI = fileURLToPath(new URL("../../../server/dist/cli.js", import.meta.url));

/**
 * The compiled child-process script `name` (without extension) of this directory. Children always
 * run from `packages/reliability/dist/crashes/` with plain node, so a test must run after
 * `pnpm build`; the path resolves the same from source and from dist.
 */
export function childScript(name: string): string {
  return fileURLToPath(new URL(`../../dist/crashes/${name}.js`, import.meta.url));
}
