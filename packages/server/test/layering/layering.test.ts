import { describe, expect, it } from "vitest";
import { importCycles, relativeImportsOf, sourceFilesUnder } from "./import-graph.js";

/** Each import of a file under `from` that names a file under one of `folders`, as `file -> specifier`. */
function importsInto(from: string, folders: readonly string[]): string[] {
  return sourceFilesUnder(from).flatMap((file) =>
    relativeImportsOf(file)
      .filter((i) => folders.some((folder) => i.target.startsWith(`${folder}/`)))
      .map((i) => `${file} -> ${i.specifier}`),
  );
}

// The layering of docs/architecture.md ("The server, layer by layer"), checked on the sources.
describe("the server's layering", () => {
  it("nothing under cluster/ imports http/", () => {
    expect(importsInto("cluster", ["http"])).toEqual([]);
  });

  it("the files of cluster/ import one another without a cycle (import type included)", () => {
    expect(importCycles(sourceFilesUnder("cluster")).map((cycle) => cycle.join(" -> "))).toEqual([]);
  });

  it("the coordinator's two adapters, cluster/postgres/ and cluster/memory/, do not import each other", () => {
    expect([...importsInto("cluster/postgres", ["cluster/memory"]), ...importsInto("cluster/memory", ["cluster/postgres"])]).toEqual([]);
  });

  it("support/ (shared by http/ and the cluster's replication route) imports no other folder of the server", () => {
    const outside = sourceFilesUnder("support").flatMap((file) =>
      relativeImportsOf(file)
        .filter((i) => !i.target.startsWith("support/"))
        .map((i) => `${file} -> ${i.specifier}`),
    );
    expect(outside).toEqual([]);
  });
});
