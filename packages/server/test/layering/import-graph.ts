import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";

/** The server package's `src` folder, absolute. */
export const SERVER_SRC = resolve(import.meta.dirname, "../../src");

/** One relative import of a source file, resolved to the file it names. */
export interface RelativeImport {
  /** The specifier as written (`../../http/read-body.js`). */
  readonly specifier: string;
  /** The imported file, relative to {@link SERVER_SRC} with `/` separators (`http/read-body.ts`). */
  readonly target: string;
}

/** Every `.ts` file below `folder` (relative to {@link SERVER_SRC}), as paths relative to it with `/` separators. */
export function sourceFilesUnder(folder: string): string[] {
  return readdirSync(join(SERVER_SRC, folder), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".ts"))
    .map((name) => `${folder}/${name.split(sep).join("/")}`)
    .sort();
}

/**
 * The relative imports of one file (relative to {@link SERVER_SRC}): static and dynamic imports,
 * `import type` and re-exports included, as TypeScript's scanner finds them (comments and strings
 * are not read as imports). A `.js` specifier names the `.ts` file beside it.
 */
export function relativeImportsOf(file: string): RelativeImport[] {
  const text = readFileSync(join(SERVER_SRC, file), "utf8");
  const { importedFiles } = ts.preProcessFile(text, true, true);
  return importedFiles
    .map((f) => f.fileName)
    .filter((specifier) => specifier.startsWith("./") || specifier.startsWith("../"))
    .map((specifier) => {
      const absolute = resolve(SERVER_SRC, dirname(file), specifier.replace(/\.js$/, ".ts"));
      if (!existsSync(absolute)) throw new Error(`${file} imports ${specifier}, which is not a file`);
      return { specifier, target: relative(SERVER_SRC, absolute).split(sep).join("/") };
    });
}

/**
 * The import cycles among `files`: each as the files of one cycle in import order, its first file
 * repeated at the end. Imports of files outside `files` are not followed. A depth-first search
 * reports one cycle per back edge it meets, so a tangle of several cycles shows at least one.
 */
export function importCycles(files: readonly string[]): string[][] {
  const inSet = new Set(files);
  const edges = new Map(files.map((f) => [f, relativeImportsOf(f).map((i) => i.target).filter((t) => inSet.has(t))]));
  const done = new Set<string>();
  const path: string[] = [];
  const cycles: string[][] = [];
  const visit = (file: string): void => {
    path.push(file);
    for (const next of edges.get(file) ?? []) {
      const at = path.indexOf(next);
      if (at >= 0) cycles.push([...path.slice(at), next]);
      else if (!done.has(next)) visit(next);
    }
    path.pop();
    done.add(file);
  };
  for (const file of files) if (!done.has(file)) visit(file);
  return cycles;
}
