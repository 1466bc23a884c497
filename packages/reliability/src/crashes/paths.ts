import { fileURLToPath } from "node:url";

/**
 * The compiled child-process script `name` (without extension) of this directory. Children always
 * run from `packages/reliability/dist/crashes/` with plain node, so a test must run after
 * `pnpm build`; the path resolves the same from source and from dist.
 */
export function childScript(name: string): string {
  return fileURLToPath(new URL(`../../dist/crashes/${name}.js`, import.meta.url));
}
