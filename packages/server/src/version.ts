/** The version of @leasehold/server, written from its package.json by scripts/sync-version.mjs at build time. */
export const VERSION = "0.1.0";
