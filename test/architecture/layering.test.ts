import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  ALLOWED_ARROWS,
  deepImports,
  graphOf,
  importCycles,
  importSpecifiers,
  layerOf,
  layerViolations,
  readImportGraph,
  vendorNames,
} from "../../scripts/layers.js";

/**
 * The layering rules of ARCHITECTURE.md, checked on the real import graph of
 * src/ (static imports, `import type`, `export ... from`, dynamic `import()`):
 * every arrow between layers is in the allowed-arrows table, there are no
 * import cycles, and src/core names no carrier, platform or vendor in code.
 * Each rule is also shown to fail on a planted violation.
 */

const ROOT = join(import.meta.dirname, "..", "..");
const GRAPH = readImportGraph(ROOT);

/** A synthetic graph: files and their sources. */
function planted(sources: Record<string, string>): ReturnType<typeof graphOf> {
  return graphOf(Object.keys(sources), (file) => sources[file] ?? "");
}

describe("layering", () => {
  it("reads the whole source tree, every layer included", () => {
    expect(GRAPH.files.length).toBeGreaterThan(200);
    const layers = new Set(GRAPH.files.map(layerOf));
    for (const layer of Object.keys(ALLOWED_ARROWS)) expect(layers).toContain(layer);
  });

  it("every import between layers follows an allowed arrow", () => {
    expect(layerViolations(GRAPH.edges)).toEqual([]);
  });

  it("every static import across layers goes through the target layer's index.ts", () => {
    expect(deepImports(GRAPH.edges)).toEqual([]);
  });

  it("the source tree has no import cycles", () => {
    expect(importCycles(GRAPH.edges)).toEqual([]);
  });

  it("every file of src/ belongs to a layer, the composition root's parts (src/app) included", () => {
    expect(GRAPH.files.filter((file) => layerOf(file) === undefined)).toEqual([]);
    expect(layerOf("src/app/gateway.ts")).toBe("composition");
    expect(layerOf("src/voice/media/media-leg.ts")).toBe("voice");
  });

  it("the Talk model (src/core) does no file or process I/O: no node:fs or node:child_process outside its tests", () => {
    const offenders: string[] = [];
    for (const file of GRAPH.files) {
      if (layerOf(file) !== "core" || file.endsWith(".test.ts")) continue;
      for (const { specifier } of importSpecifiers(readFileSync(join(ROOT, file), "utf8")))
        if (/^(node:)?(fs|fs\/promises|child_process)$/.test(specifier))
          offenders.push(`${file}: ${specifier}`);
    }
    expect(offenders).toEqual([]);
  });

  it("src/core and the voice engine name no carrier, platform or vendor in code, identifiers included", () => {
    const offenders: string[] = [];
    for (const file of GRAPH.files) {
      const layer = layerOf(file);
      if ((layer !== "core" && layer !== "voice") || file.endsWith(".test.ts")) continue;
      for (const hit of vendorNames(readFileSync(join(ROOT, file), "utf8")))
        offenders.push(`${file}: ${hit}`);
    }
    expect(offenders).toEqual([]);
  });
});

describe("the layering checks fail on planted violations", () => {
  it("reads static, type-only, re-export and dynamic imports", () => {
    const specs = importSpecifiers(
      [
        'import { a } from "./a.js";',
        'import type { B } from "./b.js";',
        'export { c } from "./c.js";',
        'export * from "./d.js";',
        'const e = await import("./e.js");',
        'type F = import("./f.js").F;',
      ].join("\n"),
    );
    expect(specs.map((s) => s.specifier)).toEqual([
      "./a.js",
      "./b.js",
      "./c.js",
      "./d.js",
      "./e.js",
      "./f.js",
    ]);
    expect(specs.find((s) => s.specifier === "./e.js")?.dynamic).toBe(true);
  });

  it("codecs importing core is refused (codecs import nothing above them)", () => {
    const edges = planted({
      "src/codecs/wav.ts": 'import type { AudioFormat } from "../core/talk-types.js";',
      "src/core/talk-types.ts": "",
    });
    expect(layerViolations(edges)).toEqual(["src/codecs/wav.ts -> src/core/talk-types.ts (codecs -> core)"]);
  });

  it("core importing a surface, config, cluster or provider is refused, even as a type or dynamically", () => {
    const edges = planted({
      "src/core/session.ts": [
        'import type { CallSession } from "../telephony/call-session.js";',
        'import { loadConfig } from "../config/index.js";',
        'export { JobQueue } from "../cluster/job-queue.js";',
        'const p = await import("../providers/index.js");',
      ].join("\n"),
      "src/telephony/call-session.ts": "",
      "src/config/index.ts": "",
      "src/cluster/job-queue.ts": "",
      "src/providers/index.ts": "",
    });
    expect(layerViolations(edges)).toHaveLength(4);
  });

  it("the voice engine stands on the Talk model: core importing it is refused, as is it importing a provider or a surface", () => {
    const edges = planted({
      "src/core/talk-session.ts": 'import type { MediaLeg } from "../voice/index.js";',
      "src/voice/media/media-leg.ts": [
        'import { TalkError } from "../../core/index.js";',
        'import type { RealtimeProvider } from "../../providers/index.js";',
        'import type { SessionOwnership } from "../../gateway/index.js";',
      ].join("\n"),
      "src/voice/index.ts": "",
      "src/core/index.ts": "",
      "src/providers/index.ts": "",
      "src/gateway/index.ts": "",
      "src/app/gateway.ts": 'import { MediaLeg } from "../voice/index.js";',
    });
    expect(layerViolations(edges)).toEqual([
      "src/core/talk-session.ts -> src/voice/index.ts (core -> voice)",
      "src/voice/media/media-leg.ts -> src/providers/index.ts (voice -> providers)",
      "src/voice/media/media-leg.ts -> src/gateway/index.ts (voice -> gateway)",
    ]);
  });

  it("providers and cluster may import core's contracts, but not each other or a surface", () => {
    const edges = planted({
      "src/providers/x/x.ts": 'import type { ProviderContract } from "../../core/index.js";',
      "src/cluster/c.ts":
        'import type { Coordinator } from "../core/index.js";\nimport "../gateway/index.js";',
      "src/core/index.ts": "",
      "src/gateway/index.ts": "",
    });
    expect(layerViolations(edges)).toEqual(["src/cluster/c.ts -> src/gateway/index.ts (cluster -> gateway)"]);
  });

  it("a cycle through any number of files is found, a type-only import included", () => {
    const edges = planted({
      "src/meetings/bot/a.ts": 'import { B } from "./b.js";',
      "src/meetings/bot/b.ts": 'import { C } from "./c.js";',
      "src/meetings/bot/c.ts": 'import type { A } from "./a.js";',
      "src/meetings/bot/d.ts": 'import { A } from "./a.js";',
    });
    expect(importCycles(edges)).toEqual([
      ["src/meetings/bot/a.ts", "src/meetings/bot/b.ts", "src/meetings/bot/c.ts"],
    ]);
  });

  it("a vendor name in an identifier or a string is found; comments and plain English are not", () => {
    expect(vendorNames('if (carrier === "twilio") {}')).toEqual(['twilio in "twilio"']);
    expect(vendorNames("const twilioSid = 1;")).toEqual(['twilio in "twilioSid"']);
    expect(vendorNames("class OpenAIRealtime {}")).toEqual(['openai in "OpenAIRealtime"']);
    expect(vendorNames("const url = `wss://${host}/zoom/stream`;")).toEqual(['zoom in "/zoom/stream"']);
    expect(vendorNames('const p = "google-meet";')).toEqual(['meet in "google-meet"']);
    expect(vendorNames("function launchChromium() {}")).toEqual(['chromium in "launchChromium"']);
    expect(vendorNames("// talks to twilio\n/* and openai */\nconst x = 1;")).toEqual([]);
    expect(vendorNames('const meetingId = "a meeting"; const teamSize = 2; const browserless = 1;')).toEqual(
      [],
    );
  });

  it("a static import across layers that bypasses the target's index.ts is found", () => {
    const edges = planted({
      "src/telephony/call.ts": [
        'import { TalkError } from "../core/errors.js";',
        'import { TalkRuntime } from "../core/index.js";',
        'import { fakeProvider } from "../core/testing/fake-provider.js";',
        'import { x } from "./x.js";',
        'const { lazy } = await import("../core/lazy.js");',
      ].join("\n"),
      "src/telephony/x.ts": "",
      "src/core/errors.ts": "",
      "src/core/lazy.ts": "",
      "src/core/index.ts": "",
      "src/core/testing/fake-provider.ts": "",
    });
    expect(deepImports(edges)).toEqual(["src/telephony/call.ts -> src/core/errors.ts"]);
  });
});
