import { describe, expect, it, vi } from "vitest";
import { NOOP_LOGGER, type TalkLogger } from "../../src/core/logger.js";
import type * as Codecs from "../../src/codecs/index.js";

// A machine where the Silero model cannot load (its package missing or broken). A module-level mock: this
// file runs in a process of its own (test/), not among the unit files, which share one module graph per
// worker (vitest.config.ts), where it made src/app/input-processing.test.ts see no Silero either.
vi.mock("../../src/codecs/index.js", async (importOriginal) => {
  const codecs = await importOriginal<typeof Codecs>();
  return {
    ...codecs,
    sileroVadAvailable: () => false,
    sileroModel: () => {
      throw new Error("no silero_vad.onnx here");
    },
  };
});

const { validateConfig } = await import("../../src/config/load-config.js");
const { echoCancellation } = await import("../../src/app/pipelines.js");

describe("talk.input.echoCancellation.residualVad where the Silero model cannot load", () => {
  const run = (echo: Record<string, unknown>) => {
    const warnings: string[] = [];
    const logger: TalkLogger = { ...NOOP_LOGGER, warn: (_, msg) => void warnings.push(msg ?? "") };
    const { config } = validateConfig({ talk: { input: { echoCancellation: echo } } });
    return { options: echoCancellation(config, logger).options, warnings };
  };

  it("unset: runs without it, with a warning naming the key", () => {
    const { options, warnings } = run({});
    expect(options.residualVad).toBe(false);
    expect(warnings.join("\n")).toContain("talk.input.echoCancellation.residualVad");
  });

  it("set true: refused at start with config_invalid naming the key", () => {
    expect(() => run({ residualVad: true })).toThrow(
      expect.objectContaining({ code: "config_invalid", message: expect.stringContaining("residualVad") }),
    );
  });

  it("set false: off, no warning", () => {
    expect(run({ residualVad: false })).toEqual({
      options: expect.objectContaining({ residualVad: false }),
      warnings: [],
    });
  });
});
