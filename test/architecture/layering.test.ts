import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The layering rule of ARCHITECTURE.md, checked on the source: src/core never
 * imports a surface or a vendor edge, and never names a carrier, platform or
 * vendor in code (comments may explain, code may not branch).
 */

const ROOT = join(import.meta.dirname, "..", "..");

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (name !== "testing") out.push(...sourceFiles(path));
    } else if (name.endsWith(".ts") && !name.endsWith(".test.ts")) out.push(path);
  }
  return out;
}

/** Removes comments so that only code is checked (strings are kept). */
function stripComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
}

const CORE_FILES = sourceFiles(join(ROOT, "src", "core"));
const FORBIDDEN_IMPORT =
  /from\s+["'](?:\.\.\/)+(?:gateway|telephony|meetings|providers|cluster|client|cli|config)\//;
const VENDOR_NAME =
  /["'`][^"'`\n]*\b(twilio|openai|azure|xai|google|gmeet|zoom|teams|webex|espeak|pocketsphinx|elevenlabs|chromium|puppeteer)\b[^"'`\n]*["'`]/i;

describe("layering", () => {
  it("finds the core sources it checks", () => {
    expect(CORE_FILES.length).toBeGreaterThan(20);
  });

  it("src/core imports no surface, vendor edge, config or CLI", () => {
    const offenders = CORE_FILES.filter((f) => FORBIDDEN_IMPORT.test(readFileSync(f, "utf8"))).map((f) =>
      relative(ROOT, f),
    );
    expect(offenders).toEqual([]);
  });

  it("src/core names no carrier, platform or vendor in code", () => {
    const offenders: string[] = [];
    for (const file of CORE_FILES) {
      const match = VENDOR_NAME.exec(stripComments(readFileSync(file, "utf8")));
      if (match) offenders.push(`${relative(ROOT, file)}: ${match[0]}`);
    }
    expect(offenders).toEqual([]);
  });

  it("the vendor check would catch a branch on a vendor name", () => {
    expect(VENDOR_NAME.test(stripComments('if (provider === "openai") {}'))).toBe(true);
    expect(VENDOR_NAME.test(stripComments("// talks to twilio\nconst x = 1;"))).toBe(false);
  });
});
