import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { CHILD_BUNDLE_ENV, childEntryArgs, childEntryMarker } from "../support/child-bundle.js";

const ROOT = join(import.meta.dirname, "..", "..");
const runDir = process.env[CHILD_BUNDLE_ENV];

describe("the server processes' bundle (test/support/child-bundle.ts)", () => {
  afterEach(() => {
    if (runDir === undefined) delete process.env[CHILD_BUNDLE_ENV];
    else process.env[CHILD_BUNDLE_ENV] = runDir;
  });

  it("is built for the run, and each module keeps its source's location", () => {
    expect(runDir, "the global setup names the run's bundle").toBeTruthy();
    const bundle = readFileSync(join(runDir!, "talkgate.mjs"), "utf8");
    expect(bundle).not.toContain("import.meta.url");
    // The web pages are found beside src/app/pages.ts, the decoder script beside its module.
    expect(bundle).toContain(JSON.stringify(pathToFileURL(join(ROOT, "src/app/pages.ts")).href));
    expect(bundle).toContain(
      JSON.stringify(pathToFileURL(join(ROOT, "src/providers/pocketsphinx/resident-decoder.ts")).href),
    );
  });

  it("runs the CLI as the sources do", () => {
    const r = spawnSync(process.execPath, [...childEntryArgs("talkgate"), "help"], {
      cwd: ROOT,
      encoding: "utf8",
    });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("talkgate serve [--config PATH]");
  });

  it("without the global setup, a test process runs the sources under tsx", () => {
    delete process.env[CHILD_BUNDLE_ENV];
    expect(childEntryArgs("cluster-server")).toEqual(["--import", "tsx", "test/support/cluster-server.ts"]);
    expect(childEntryMarker("talkgate")).toBe("src/cli/main.ts");
  });
});
