// Writes the JSON Schema files (schemas/*.schema.json) and the OpenAPI 3.1 document
// (openapi.json) of protocol v1 from the built TypeBox schemas. Run after changing a schema:
// `pnpm --filter @leasehold/protocol generate`; test/documents.test.ts fails until you do.
// It lives outside src/ because it writes files: the package's runtime code never touches node:fs.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openApiDocument, protocolJsonSchemas } from "../dist/index.js";

const root = join(import.meta.dirname, "..");
const text = (value) => `${JSON.stringify(value, null, 2)}\n`;
const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));

const dir = join(root, "schemas");
mkdirSync(dir, { recursive: true });
const files = protocolJsonSchemas();
// A schema removed from the catalog must not linger as a stale file.
for (const old of readdirSync(dir)) if (!(old in files)) rmSync(join(dir, old));
for (const [name, schema] of Object.entries(files)) writeFileSync(join(dir, name), text(schema));
writeFileSync(join(root, "openapi.json"), text(openApiDocument({ version })));
console.log(`wrote ${Object.keys(files).length} JSON Schemas to schemas/ and openapi.json`);
