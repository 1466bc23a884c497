#!/usr/bin/env node
// Builds the package in the current directory twice from one source:
//   dist/       ES modules and their .d.ts (tsconfig.build.json; the paths bin, scripts and docs use)
//   dist/cjs/   CommonJS and its .d.ts (tsconfig.cjs.json), marked by dist/cjs/package.json
//               {"type":"commonjs"} so Node and TypeScript read those .js and .d.ts files as CommonJS.
// package.json "exports" sends `import` to dist/ and `require` to dist/cjs/. dist/ is emptied first
// so a renamed or deleted source file never ships a stale output.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";

const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const run = (project) => execFileSync(process.execPath, [tsc, "-p", project], { stdio: "inherit" });

if (existsSync("src/version.ts")) {
  execFileSync(process.execPath, [new URL("./sync-version.mjs", import.meta.url).pathname], { stdio: "inherit" });
}
rmSync("dist", { recursive: true, force: true });
run("tsconfig.build.json");
run("tsconfig.cjs.json");
mkdirSync("dist/cjs", { recursive: true });
writeFileSync("dist/cjs/package.json", `${JSON.stringify({ type: "commonjs" }, null, 2)}\n`);
