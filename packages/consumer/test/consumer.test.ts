/**
 * The packages as a user outside this repository gets them: every non-private package is packed
 * with `pnpm pack` (workspace:* becomes a version), the tarballs are installed with plain npm into
 * a temporary project, and there:
 * - an ES module program, a CommonJS program and an esbuild bundle of the ES module program each
 *   start an embedded server and take and release locks (fixtures/scenario.cjs);
 * - an esbuild CommonJS bundle of a CommonJS program (fixtures/bundle-program.cjs) does the same over
 *   HTTP from a directory with no node_modules (undici and pino are in the bundle);
 * - a TypeScript consumer type-checks under module node16 (an .mts and a .cts file), nodenext and
 *   bundler, with skipLibCheck: false and exactOptionalPropertyTypes: true;
 * - publint (--strict) and attw pass on every tarball.
 * The tools are the repository's pinned devDependencies; npm keeps its cache under node_modules/.cache.
 * The time limits are for a shared, busy machine: three type-checks (skipLibCheck: false checks
 * @types/node too) and four attw runs are a minute of CPU between them, spread over two cores.
 */
import { execFile, spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const fixtures = fileURLToPath(new URL("../fixtures/", import.meta.url));

interface PackageInfo {
  readonly name: string;
  readonly dir: string;
  readonly private?: boolean | undefined;
}

/** Every package a user can install: the non-private ones under packages/. */
const published: readonly PackageInfo[] = readdirSync(join(root, "packages"))
  .map((dir) => join(root, "packages", dir))
  .filter((dir) => existsSync(join(dir, "package.json")))
  .map((dir) => ({ ...(JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name: string; private?: boolean }), dir }))
  .filter((p) => p.private !== true);

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function run(command: string, args: readonly string[], cwd: string, timeoutMs = 240_000, env?: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    const options = { cwd, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, ...(env !== undefined && { env: { ...process.env, ...env } }) };
    execFile(command, args, options, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === "number" ? err.code : 1;
      resolve({ code, stdout, stderr: err !== null && typeof err.code !== "number" ? `${stderr}\n${err.message}` : stderr });
    });
  });
}

async function ok(command: string, args: readonly string[], cwd: string): Promise<Run> {
  const result = await run(command, args, cwd);
  if (result.code !== 0) throw new Error(`${command} ${args.join(" ")} exited ${result.code}:\n${result.stdout}\n${result.stderr}`);
  return result;
}

/** pnpm as `pnpm test` runs it (npm_execpath), else the one on PATH. */
function pnpm(args: readonly string[], cwd: string): Promise<Run> {
  const execPath = process.env.npm_execpath;
  return execPath !== undefined && /pnpm/.test(execPath) ? ok(process.execPath, [execPath, ...args], cwd) : ok("pnpm", args, cwd);
}

const bin = (name: string): string => join(root, "node_modules", ".bin", name);
const tsc = join(root, "node_modules", "typescript", "bin", "tsc");

/** What fixtures/scenario.cjs sees when every package works. */
const SCENARIO = { acquired: "acquired", whileHeld: "timeout", released: 1, afterRelease: "acquired", committed: "10", badInput: "INVALID_ARGUMENT" };

let work: string;
let project: string;
const tarballs = new Map<string, string>();

beforeAll(async () => {
  for (const p of published) {
    if (!existsSync(join(p.dir, "dist"))) throw new Error(`${p.name} is not built: run pnpm build first`);
  }
  work = mkdtempSync(join(tmpdir(), "leasehold-consumer-"));
  project = join(work, "project");
  const packs = join(work, "tarballs");
  await Promise.all(published.map((p) => pnpm(["pack", "--pack-destination", packs], p.dir)));
  for (const file of readdirSync(packs)) {
    const p = published.find((q) => file === `${q.name.replace(/^@/, "").replace("/", "-")}-${readVersion(q.dir)}.tgz`);
    if (p !== undefined) tarballs.set(p.name, join(packs, file));
  }
  expect([...tarballs.keys()].sort()).toEqual(published.map((p) => p.name).sort());
  await ok("mkdir", ["-p", project], work);
  writeFileSync(join(project, "package.json"), `${JSON.stringify({ name: "leasehold-consumer", version: "1.0.0", private: true }, null, 2)}\n`);
  // Plain npm, as a user would: the tarballs' dependencies come from the registry (cached).
  await ok(
    "npm",
    [
      "install",
      "--no-audit",
      "--no-fund",
      "--prefer-offline",
      "--loglevel=error",
      "--cache",
      join(root, "node_modules", ".cache", "leasehold-consumer-npm"),
      ...tarballs.values(),
      "pino@^10.1.0",
      "@types/node@^20.19.0",
    ],
    project,
  );
  for (const file of readdirSync(fixtures)) {
    if (file.endsWith(".mjs") || file.endsWith(".cjs")) copyFileSync(join(fixtures, file), join(project, file));
  }
  // One TypeScript consumer, as an ES module (.mts), a CommonJS module (.cts) and for bundlers (.ts).
  for (const file of ["consumer.mts", "consumer.cts", "consumer.ts"]) copyFileSync(join(fixtures, "typescript", "usage.ts"), join(project, file));
}, 300_000);

afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

function readVersion(dir: string): string {
  return (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version: string }).version;
}

/**
 * `use` with the URL of a leasehold server started from the installed packages (fixtures/serve.cjs)
 * in its own process; the server is stopped (its standard input closed, then killed) afterwards.
 */
async function withServer<T>(use: (url: string) => Promise<T>): Promise<T> {
  const server = spawn(process.execPath, ["serve.cjs"], { cwd: project, stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise<void>((resolve) => server.once("exit", () => resolve()));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = "";
      server.stdout.setEncoding("utf8");
      server.stdout.on("data", (chunk: string) => {
        out += chunk;
        const line = out.split("\n")[0]!;
        if (out.includes("\n")) resolve(line.trim());
      });
      server.once("exit", (code) => reject(new Error(`serve.cjs exited ${code} before printing its URL`)));
    });
    return await use(url);
  } finally {
    server.stdin.end();
    const timer = setTimeout(() => server.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
  }
}

/** The last stdout line as JSON: what the program saw. */
function answerOf(result: Run): unknown {
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout.trim().split("\n").at(-1) ?? "");
}

/** The default logger is pino: its JSON warning line, named leasehold-client. */
function expectPinoWarning(stderr: string): void {
  const lines = stderr.split("\n").filter((l) => l.startsWith("{"));
  const warning = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.name === "leasehold-client");
  expect(warning, stderr).toMatchObject({ level: 40, name: "leasehold-client", msg: expect.stringContaining("tryUnlock expects an array") });
}

describe("the packages as a user installs them", () => {
  it("tarballs name versions, never workspace: ranges, and carry LICENSE, README and sources of their maps", async () => {
    for (const [name, tarball] of tarballs) {
      const unpacked = mkdtempSync(join(work, "unpacked-"));
      await ok("tar", ["-xzf", tarball, "-C", unpacked], work);
      const at = (file: string): string => join(unpacked, file);
      for (const file of ["LICENSE", "README.md", "package.json", "dist/index.js", "dist/cjs/index.js", "dist/cjs/package.json"]) {
        expect(existsSync(at(join("package", file))), `${name} lacks ${file}`).toBe(true);
      }
      const manifest = readFileSync(at("package/package.json"), "utf8");
      expect(manifest, name).not.toContain("workspace:");
      expect(JSON.parse(manifest)).toMatchObject({ license: "Apache-2.0", publishConfig: { access: "public" } });
      // Every source a shipped map names is shipped too.
      const listing = (await ok("tar", ["-tzf", tarball], work)).stdout.split("\n");
      const maps = listing.filter((f) => f.endsWith(".js.map") || f.endsWith(".d.ts.map"));
      expect(maps.length, name).toBeGreaterThan(0);
      for (const map of maps) {
        const { sources } = JSON.parse(readFileSync(at(map), "utf8")) as { sources: string[] };
        for (const source of sources) expect(existsSync(at(join(map, "..", source))), `${map} names ${source}`).toBe(true);
      }
    }
  }, 120_000);

  it("an ES module program starts an embedded server, takes and releases locks", async () => {
    const result = await run(process.execPath, ["program.mjs"], project);
    expect(answerOf(result)).toEqual(SCENARIO);
    expectPinoWarning(result.stderr);
  }, 120_000);

  it("a CommonJS program does the same, and errors of both builds are LeaseholdErrors to each other", async () => {
    const result = await run(process.execPath, ["program.cjs"], project);
    expect(answerOf(result)).toEqual({
      ...SCENARIO,
      dualPackage: { twoClasses: true, esmErrorIsCjsInstance: true, cjsErrorIsEsmInstance: true, plainErrorIsNot: false },
    });
  }, 120_000);

  it("the client bundles with esbuild for Node (ESM output, no banner) and the bundle runs with pino as its logger", async () => {
    const outfile = join(project, "bundle.mjs");
    const result = await build({
      absWorkingDir: project,
      entryPoints: ["program.mjs"],
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      outfile,
      metafile: true,
      logLevel: "silent",
      // The server is not the subject (its CLI and embedding are for Node as installed); the client,
      // protocol and txn packages are bundled.
      external: ["@leasehold/server"],
    });
    const inputs = Object.keys(result.metafile.inputs);
    for (const bundled of ["@leasehold/client", "@leasehold/protocol", "@leasehold/txn"]) {
      expect(inputs.some((i) => i.includes(`node_modules/${bundled}/dist/`)), `${bundled} bundled`).toBe(true);
    }
    expect(readFileSync(outfile, "utf8")).not.toMatch(/from "@leasehold\/client"/);
    const ran = await run(process.execPath, ["bundle.mjs"], project);
    expect(answerOf(ran)).toEqual(SCENARIO);
    expectPinoWarning(ran.stderr);
  }, 120_000);

  it("a CommonJS program using the client bundles with esbuild (format cjs) carrying undici and pino, and the bundle runs away from node_modules", async () => {
    const outfile = join(project, "bundle.cjs");
    const result = await build({
      absWorkingDir: project,
      entryPoints: ["bundle-program.cjs"],
      bundle: true,
      platform: "node",
      format: "cjs",
      target: "node20",
      outfile,
      metafile: true,
      logLevel: "silent",
    });
    const inputs = Object.keys(result.metafile.inputs);
    for (const bundled of ["@leasehold/client", "@leasehold/protocol", "@leasehold/txn", "undici", "pino"]) {
      expect(inputs.some((i) => i.includes(`node_modules/${bundled}/`)), `${bundled} bundled`).toBe(true);
    }
    // The bundle alone, in a directory with no node_modules in it or above it: Node can find
    // nothing but what the bundle carries.
    const away = mkdtempSync(join(tmpdir(), "leasehold-bundle-"));
    try {
      for (let dir = away; ; dir = dirname(dir)) {
        expect(existsSync(join(dir, "node_modules")), `${dir} has node_modules`).toBe(false);
        if (dirname(dir) === dir) break;
      }
      copyFileSync(outfile, join(away, "bundle.cjs"));
      const ran = await withServer((url) => run(process.execPath, ["bundle.cjs"], away, 60_000, { LEASEHOLD_URL: url }));
      expect(answerOf(ran)).toEqual(SCENARIO);
      expectPinoWarning(ran.stderr);
    } finally {
      rmSync(away, { recursive: true, force: true });
    }
  }, 120_000);

  const typescript = [
    { name: "node16", module: "node16", moduleResolution: "node16", files: ["consumer.mts", "consumer.cts"] },
    { name: "nodenext", module: "nodenext", moduleResolution: "nodenext", files: ["consumer.mts", "consumer.cts"] },
    { name: "bundler", module: "esnext", moduleResolution: "bundler", files: ["consumer.ts"] },
  ] as const;

  it.concurrent.each(typescript)("a TypeScript consumer type-checks under module $name (skipLibCheck: false, exactOptionalPropertyTypes)", async (setup) => {
    const config = {
      compilerOptions: {
        target: "ES2022",
        lib: ["ES2023"],
        types: ["node"],
        module: setup.module,
        moduleResolution: setup.moduleResolution,
        strict: true,
        exactOptionalPropertyTypes: true,
        skipLibCheck: false,
        noEmit: true,
      },
      files: setup.files,
    };
    writeFileSync(join(project, `tsconfig.${setup.name}.json`), JSON.stringify(config, null, 2));
    const result = await run(process.execPath, [tsc, "-p", `tsconfig.${setup.name}.json`], project);
    expect(result.stdout + result.stderr).toBe("");
    expect(result.code).toBe(0);
  }, 300_000);

  it.concurrent.each(published.map((p) => p.name))("%s passes publint --strict and attw", async (name) => {
    const tarball = tarballs.get(name)!;
    const publint = await run(bin("publint"), ["run", "--strict", tarball], work);
    expect(publint.code, publint.stdout + publint.stderr).toBe(0);
    const attw = await run(bin("attw"), [tarball, "--format", "ascii"], work);
    expect(attw.code, attw.stdout + attw.stderr).toBe(0);
    expect(attw.stdout).toContain("No problems found");
  }, 300_000);
});
