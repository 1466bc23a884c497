/**
 * Every optional property declared in a published package's source accepts `undefined`
 * (`field?: T | undefined`), so a consumer compiled with `exactOptionalPropertyTypes` can pass
 * `{ signal: maybeSignal }`. The TypeScript consumer in consumer.test.ts checks the calls it makes;
 * this checks every declaration, including ones added later.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../../", import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") ? [path] : [];
  });
}

const published = readdirSync(join(root, "packages"))
  .map((dir) => join(root, "packages", dir))
  .filter((dir) => existsSync(join(dir, "package.json")) && existsSync(join(dir, "src")))
  .filter((dir) => (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { private?: boolean }).private !== true);

/** `name?: Type;` (a property, not a method `name?(…)`), one per line, and `{ name?: Type }` inline. */
const PROPERTY = /(?:^|[{;]\s*)(?:readonly\s+)?[A-Za-z_$][\w$]*\?:\s*([^;,}]+?)\s*(?=[;,}]|$)/g;

/** Types that already include undefined. */
function acceptsUndefined(type: string): boolean {
  return /\|\s*undefined\s*$/.test(type) || /^(unknown|any|undefined)$/.test(type);
}

describe("optional properties of the published packages accept undefined", () => {
  it.each(published.map((dir) => relative(root, dir)))("%s", (dir) => {
    const offenders: string[] = [];
    for (const file of sourceFiles(join(root, dir, "src"))) {
      readFileSync(file, "utf8")
        .split("\n")
        .forEach((line, i) => {
          const code = line.replace(/\/\/.*$/, "");
          if (/^\s*\*|^\s*\/\*/.test(code)) return; // comments
          for (const match of code.matchAll(PROPERTY)) {
            const type = (match[1] ?? "").trim();
            // A multi-line type or a function type cut at a comma: not a single-line declaration.
            if (type === "" || type.endsWith("|") || type.endsWith("(") || type.endsWith("=>")) continue;
            if (!acceptsUndefined(type)) offenders.push(`${relative(root, file)}:${i + 1}: ${line.trim()}`);
          }
        });
    }
    expect(offenders, "declare these as `field?: T | undefined`").toEqual([]);
  });
});
