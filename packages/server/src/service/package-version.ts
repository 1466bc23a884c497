import { readFileSync } from "node:fs";

/** This package's version, as health and metrics report it ("0.0.0" when package.json cannot be read). */
export const PACKAGE_VERSION = readPackageVersion();

function readPackageVersion(): string {
  try {
    const text = readFileSync(new URL("../../package.json", import.meta.url), "utf8");
    const version = (JSON.parse(text) as { version?: unknown }).version;
    return typeof version === "string" ? version : "0.0.0";
  } catch {
    return "0.0.0";
  }
}
