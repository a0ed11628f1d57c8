/**
 * The server processes the tests start (the cluster e2e workers, `talkgate serve --workers N`) run from one
 * bundle per entry, built once per test run (child-bundle-setup.ts), not from the TypeScript sources under
 * `--import tsx`. Node 20 runs a loader's hooks on a thread of their own, and each of the ~400 modules a server
 * imports went through them: a start cost 1.2 CPU-s more under tsx, and the cluster files start 30-odd
 * workers (docs/notes/performance-history.md, "The suite's child servers from a bundle").
 *
 * The bundle keeps what a module sees of its own location: each `import.meta.url` becomes the source file's
 * URL, so assets found beside the code (the web pages, the decoder script, the Moonshine worker, the client's
 * TypeScript entry) and `createRequire` resolve as they do under tsx. Packages stay imports, resolved from the
 * repository's node_modules (the bundle is written under it). The tests whose subject is the command a user
 * types (cli-serve, cli-call) still run `node --import tsx src/cli/main.ts`; cli-compiled runs the tsc build.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/** The directory holding this run's bundles; set by the global setup, inherited by the test processes. */
export const CHILD_BUNDLE_ENV = "TALKGATE_TEST_CHILD_BUNDLE";

const ROOT = join(import.meta.dirname, "..", "..");

/** Each bundled entry: its name (the bundle's file name) and its source. */
export const CHILD_ENTRIES = {
  "cluster-server": "test/support/cluster-server.ts",
  talkgate: "src/cli/main.ts",
} as const;

export type ChildEntry = keyof typeof CHILD_ENTRIES;

/**
 * Node's arguments that run `entry`: its bundle when this run built one, else its source under tsx (a test
 * process started without the global setup).
 */
export function childEntryArgs(entry: ChildEntry): string[] {
  const dir = process.env[CHILD_BUNDLE_ENV];
  if (dir) return ["--enable-source-maps", join(dir, `${entry}.mjs`)];
  return ["--import", "tsx", CHILD_ENTRIES[entry]];
}

/** What a process started by `childEntryArgs(entry)` has in its command line, whichever form it took. */
export function childEntryMarker(entry: ChildEntry): string {
  return process.env[CHILD_BUNDLE_ENV] ? `${entry}.mjs` : CHILD_ENTRIES[entry];
}

/** Bundles every entry into `outDir` (under the repository's node_modules, so packages resolve from there). */
export async function buildChildBundles(outDir: string): Promise<void> {
  const esbuild = await import("esbuild");
  const entryPoints = Object.fromEntries(
    Object.entries(CHILD_ENTRIES).map(([name, source]) => [name, join(ROOT, source)]),
  );
  await esbuild.build({
    entryPoints,
    outdir: outDir,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    sourcemap: true,
    logLevel: "error",
    plugins: [
      {
        name: "source-import-meta-url",
        setup(build) {
          build.onLoad({ filter: /\.ts$/ }, async ({ path }) => {
            const source = await readFile(path, "utf8");
            const url = JSON.stringify(pathToFileURL(path).href);
            return { contents: source.replaceAll("import.meta.url", url), loader: "ts" };
          });
        },
      },
    ],
  });
}
