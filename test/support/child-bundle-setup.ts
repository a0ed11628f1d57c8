/**
 * vitest global setup: bundles the server processes the tests start, once per run (child-bundle.ts), into a
 * directory of this run's own under node_modules/.cache (two runs on one machine do not share it), named to
 * the test processes by CHILD_BUNDLE_ENV; built again before each rerun in watch mode (the sources may have
 * changed), removed when the run ends.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { buildChildBundles, CHILD_BUNDLE_ENV } from "./child-bundle.js";

const CACHE = join(import.meta.dirname, "..", "..", "node_modules", ".cache");

export default async function setup(project: TestProject): Promise<() => void> {
  mkdirSync(CACHE, { recursive: true });
  const dir = mkdtempSync(join(CACHE, "talkgate-test-children-"));
  await buildChildBundles(dir);
  process.env[CHILD_BUNDLE_ENV] = dir;
  project.onTestsRerun(() => buildChildBundles(dir));
  return () => rmSync(dir, { recursive: true, force: true });
}
