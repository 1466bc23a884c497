#!/usr/bin/env node
// Builds the package in the current directory in both module formats from one source:
//   dist/       ES modules, .d.ts and maps, by tsc (tsconfig.build.json). The paths the bin,
//               scripts and docs use (dist/cli.js, dist/demo.js) are here.
//   dist/cjs/   CommonJS: each dist/*.js converted one to one by esbuild (no bundling), the .d.ts
//               copied beside them, and dist/cjs/package.json {"type":"commonjs"} so Node and
//               TypeScript read those .js and .d.ts files as CommonJS.
// package.json "exports" sends `import` to dist/ and `require` to dist/cjs/. dist/ is emptied first
// so a renamed or deleted source file never ships a stale output.
//
// A source X.cts beside X.ts is the CommonJS build's own X: tsc compiles it to dist/X.cjs, which
// becomes dist/cjs/X.js in place of X.js's conversion (and leaves dist/, which is the ES module
// build). The client uses this for require-dependency: its CommonJS build must `require` undici
// and pino by name so a bundler carries them, while its ES module build must not.
//
// Why esbuild and not a second tsc run: tsc refuses `import.meta` when it emits CommonJS, and the
// client needs `createRequire(import.meta.url)` (see packages/client/src/require-dependency.ts).
// Here `import.meta.url` becomes the CommonJS file's own URL.
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";

const require = createRequire(import.meta.url);
const tsc = require.resolve("typescript/bin/tsc");
const { buildSync } = require("esbuild");

/** Files of dist/ (recursively) that end with `suffix`, relative to dist/, dist/cjs/ left out. */
function distFiles(suffix, dir = "dist") {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (path !== join("dist", "cjs")) out.push(...distFiles(suffix, path));
    } else if (entry.name.endsWith(suffix)) {
      out.push(relative("dist", path));
    }
  }
  return out;
}

const noCjs = new Set(JSON.parse(readFileSync("package.json", "utf8")).leaseholdBuild?.esmOnly ?? []);

if (existsSync("src/version.ts")) {
  execFileSync(process.execPath, [new URL("./sync-version.mjs", import.meta.url).pathname], { stdio: "inherit" });
}
rmSync("dist", { recursive: true, force: true });
execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { stdio: "inherit" });

const entries = distFiles(".js").filter((f) => !noCjs.has(f)).map((f) => join("dist", f));
const usesImportMeta = (f) => readFileSync(f, "utf8").includes("import.meta");
const common = {
  outbase: "dist",
  outdir: join("dist", "cjs"),
  format: "cjs",
  platform: "node",
  target: "node20",
  bundle: false,
  sourcemap: true,
  sourcesContent: false,
  logLevel: "warning",
};
buildSync({ ...common, entryPoints: entries.filter((f) => !usesImportMeta(f)) });
const withMeta = entries.filter(usesImportMeta);
if (withMeta.length > 0) {
  buildSync({
    ...common,
    entryPoints: withMeta,
    define: { "import.meta.url": "__leaseholdModuleUrl" },
    banner: { js: '"use strict";\nconst __leaseholdModuleUrl = require("node:url").pathToFileURL(__filename).href;' },
  });
}

// The CommonJS variants (X.cts → dist/X.cjs): each replaces X.js's conversion, with its map.
for (const variant of distFiles(".cjs")) {
  const file = variant.replace(/\.cjs$/, ".js");
  if (!existsSync(join("dist", file))) throw new Error(`${variant}: no ${file} beside it (a .cts is the CommonJS build of a .ts)`);
  const to = join("dist", "cjs", file);
  const code = readFileSync(join("dist", variant), "utf8").replace(/\/\/# sourceMappingURL=\S+\s*$/, "");
  writeFileSync(to, `${code}//# sourceMappingURL=${file.split("/").at(-1)}.map\n`);
  const map = JSON.parse(readFileSync(join("dist", `${variant}.map`), "utf8"));
  map.file = file.split("/").at(-1);
  map.sources = map.sources.map((s) => `../${s}`);
  writeFileSync(`${to}.map`, JSON.stringify(map));
  for (const leftover of [variant, `${variant}.map`, variant.replace(/\.cjs$/, ".d.cts"), variant.replace(/\.cjs$/, ".d.cts.map")]) {
    rmSync(join("dist", leftover), { force: true });
  }
}

for (const file of [...distFiles(".d.ts"), ...distFiles(".d.ts.map")]) {
  if (noCjs.has(file.replace(/\.d\.ts(\.map)?$/, ".js"))) continue;
  const to = join("dist", "cjs", file);
  mkdirSync(dirname(to), { recursive: true });
  if (file.endsWith(".map")) {
    // One directory deeper: the map's sources (../src/…) need one more "../".
    const map = JSON.parse(readFileSync(join("dist", file), "utf8"));
    map.sources = map.sources.map((s) => `../${s}`);
    writeFileSync(to, JSON.stringify(map));
  } else {
    copyFileSync(join("dist", file), to);
  }
}
writeFileSync(join("dist", "cjs", "package.json"), `${JSON.stringify({ type: "commonjs" }, null, 2)}\n`);
