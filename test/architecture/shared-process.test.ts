import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { tsFiles } from "../../scripts/layers.js";
import { ISOLATED_INTEGRATION, PROCESS_WIDE } from "../support/isolated-files.js";

/**
 * Integration files share their worker's process (vitest.config.ts, `isolate: false`): a file that
 * replaces a module or a global, or sets what every app in the process reads, must have a process of
 * its own, so it must be listed in ISOLATED_INTEGRATION. Checked on every test file under test/, and
 * shown to fail on planted sources.
 */

const ROOT = join(import.meta.dirname, "..", "..");

/** The files that do something process-wide without being listed, with what they do. */
function unlisted(files: Record<string, string>, listed: readonly string[]): string[] {
  return Object.entries(files).flatMap(([file, source]) =>
    listed.includes(file)
      ? []
      : PROCESS_WIDE.filter(({ pattern }) => pattern.test(source)).map(({ what }) => `${file}: ${what}`),
  );
}

describe("test files that share a process", () => {
  const files = Object.fromEntries(
    tsFiles(join(ROOT, "test"))
      .map((path) => relative(ROOT, path))
      .filter((file) => file.endsWith(".test.ts") && file !== "test/architecture/shared-process.test.ts")
      .map((file) => [file, readFileSync(join(ROOT, file), "utf8")]),
  );

  it("none replaces a module or a global or sets OTEL_* unless it has a process of its own", () => {
    expect(unlisted(files, ISOLATED_INTEGRATION)).toEqual([]);
  });

  it("every file listed as isolated exists and does something only an isolated file may", () => {
    for (const file of ISOLATED_INTEGRATION) {
      expect(files[file], file).toBeDefined();
      expect(unlisted({ [file]: files[file]! }, []), file).not.toEqual([]);
    }
  });

  it("fails on planted sources", () => {
    const planted = {
      "test/integration/a.test.ts": 'vi.mock("../../src/codecs/index.js");',
      "test/integration/b.test.ts": 'process.env.OTEL_SERVICE_NAME = "x";',
      "test/integration/c.test.ts": 'vi.stubGlobal("fetch", f);',
      "test/integration/d.test.ts": "const x = 1;",
    };
    expect(unlisted(planted, [])).toEqual([
      "test/integration/a.test.ts: replaces a module or a global",
      "test/integration/b.test.ts: sets OTEL_* for every app the process starts",
      "test/integration/c.test.ts: replaces a module or a global",
    ]);
    expect(
      unlisted(planted, [
        "test/integration/a.test.ts",
        "test/integration/b.test.ts",
        "test/integration/c.test.ts",
      ]),
    ).toEqual([]);
  });
});
