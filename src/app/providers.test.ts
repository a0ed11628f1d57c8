import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { validateConfig } from "../config/load-config.js";
import type { TalkLogger } from "../core/logger.js";
import { NOOP_LOGGER } from "../core/logger.js";
import type { TalkSession } from "../core/session-types.js";
import { resilientResolver } from "./faults.js";
import { buildProviders, type AppProviders } from "./providers.js";

let built: AppProviders | undefined;
afterEach(async () => {
  await built?.registry.close();
  built = undefined;
});

/** A logger that keeps its warnings. */
function recordingLogger(): TalkLogger & { warnings: { obj: Record<string, unknown>; msg: string }[] } {
  const warnings: { obj: Record<string, unknown>; msg: string }[] = [];
  return {
    ...NOOP_LOGGER,
    warnings,
    warn: (obj, msg) => {
      warnings.push(typeof obj === "string" ? { obj: {}, msg: obj } : { obj, msg: msg ?? "" });
    },
  };
}

/** The ids of the STT chain a session gets: its provider, then the fallbacks in order. */
function sttChain(providers: AppProviders, raw: Record<string, unknown> = {}): string[] {
  const { config } = validateConfig(raw, { env: {} });
  const ids: string[] = [];
  const resolver = resilientResolver(config, providers.registry, providers.pipeline, NOOP_LOGGER, (p) => {
    if (p.kind === "stt") ids.push(p.id);
    return p;
  });
  resolver.stt({ id: "s1" } as TalkSession);
  return ids;
}

describe("the default speech providers", () => {
  it("a fresh configuration recognizes with Moonshine, falls back to pocketsphinx and speaks with espeak-ng", () => {
    const { config } = validateConfig({}, { env: {} });
    const logger = recordingLogger();
    built = buildProviders(config, logger);
    expect(built.resolver.defaultId("stt")).toBe("moonshine");
    expect(built.resolver.defaultId("tts")).toBe("espeak-ng");
    expect(sttChain(built)).toEqual(["moonshine", "pocketsphinx"]);
    expect(logger.warnings).toEqual([]);
  });

  it("when the Moonshine model cannot be found, pocketsphinx is the default and one warning says why", () => {
    const modelDir = mkdtempSync(join(tmpdir(), "moonshine-none-"));
    const raw = { talk: { local: { moonshine: { modelDir } } } };
    const { config } = validateConfig(raw, { env: {} });
    const logger = recordingLogger();
    built = buildProviders(config, logger);
    expect(built.resolver.defaultId("stt")).toBe("pocketsphinx");
    expect(logger.warnings).toHaveLength(1);
    expect(logger.warnings[0]!.obj).toMatchObject({
      kind: "stt",
      provider: "moonshine",
      fallback: "pocketsphinx",
    });
    expect(logger.warnings[0]!.msg).toContain("the Moonshine model is missing");
    expect(logger.warnings[0]!.msg).toContain(modelDir);
    expect(logger.warnings[0]!.msg).toContain("speech recognition uses pocketsphinx instead");
  });

  it('talk.provider "moonshine" is kept even without its model: the choice was explicit, health says what is wrong', async () => {
    const modelDir = mkdtempSync(join(tmpdir(), "moonshine-none-"));
    const { config } = validateConfig(
      { talk: { provider: "moonshine", local: { moonshine: { modelDir } } } },
      { env: {} },
    );
    const logger = recordingLogger();
    built = buildProviders(config, logger);
    expect(built.resolver.defaultId("stt")).toBe("moonshine");
    expect(logger.warnings).toEqual([]);
    const health = await built.registry.get("stt", "moonshine")!.health();
    expect(health).toMatchObject({
      ok: false,
      detail: expect.stringContaining("the Moonshine model is missing"),
    });
  });
});
