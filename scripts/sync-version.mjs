#!/usr/bin/env node
// Writes src/version.ts of the package in the current directory from its package.json "version",
// only when it differs (so an ordinary build leaves the tree clean). Why a generated file: the
// version must reach both the ESM and the CommonJS build, and CommonJS has no import.meta.url to
// find package.json from (nor is package.json at the same relative place from dist/ and dist/cjs/).
import { readFileSync, writeFileSync } from "node:fs";

const { name, version } = JSON.parse(readFileSync("package.json", "utf8"));
const text = `/** The version of ${name}, written from its package.json by scripts/sync-version.mjs at build time. */\nexport const VERSION = ${JSON.stringify(version)};\n`;
let current;
try {
  current = readFileSync("src/version.ts", "utf8");
} catch {
  current = undefined;
}
if (current !== text) writeFileSync("src/version.ts", text);
