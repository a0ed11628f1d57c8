/**
 * vitest global setup: bundles the server processes the tests start, once per run (child-bundle.ts), into a
 * directory of this run's own under node_modules/.cache (two runs on one machine do not share it), named to
 * the test processes by CHILD_BUNDLE_ENV; built again before each rerun in watch mode (the sources may have
 * changed), removed when the run ends. A run killed before its teardown leaves its directory: those a day old
 * are swept at the next run's start (a run beside this one is younger).
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { buildChildBundles, CHILD_BUNDLE_ENV } from "./child-bundle.js";

const CACHE = join(import.meta.dirname, "..", "..", "node_modules", ".cache");
const PREFIX = "talkgate-test-children-";
const STALE_MS = 24 * 3600_000;

export default async function setup(project: TestProject): Promise<() => void> {
  mkdirSync(CACHE, { recursive: true });
  sweepStale();
  const dir = mkdtempSync(join(CACHE, PREFIX));
  await buildChildBundles(dir);
  process.env[CHILD_BUNDLE_ENV] = dir;
  project.onTestsRerun(() => buildChildBundles(dir));
  return () => rmSync(dir, { recursive: true, force: true });
}

function sweepStale(): void {
  for (const name of readdirSync(CACHE)) {
    if (!name.startsWith(PREFIX)) continue;
    const dir = join(CACHE, name);
    if (Date.now() - statSync(dir).mtimeMs > STALE_MS) rmSync(dir, { recursive: true, force: true });
  }
}
