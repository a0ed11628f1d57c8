import { describe, expect, it } from "vitest";
import { BRAIN_DEFAULTS, resolveBrainOptions, toolOwnershipOf } from "./brain-options.js";

describe("brain options", () => {
  it("defaults: chunked speech, a cue after 2.5 s, a 60 s consult limit, native reply path", () => {
    const o = resolveBrainOptions();
    expect(o).toEqual(BRAIN_DEFAULTS);
    expect(o.chunker.enabled).toBe(true);
    expect(o.replyPath).toBe("native");
  });

  it("merges given fields over the defaults, undefined ones ignored", () => {
    const o = resolveBrainOptions({ chunker: { minChars: 50, maxChars: undefined }, progressCueMs: 0 });
    expect(o.chunker).toMatchObject({ minChars: 50, maxChars: BRAIN_DEFAULTS.chunker.maxChars });
    expect(o.progressCueMs).toBe(0);
  });

  it("refuses inconsistent sizes and unknown reply paths at construction", () => {
    expect(() => resolveBrainOptions({ chunker: { minChars: 500, maxChars: 100 } })).toThrow(/maxChars/);
    expect(() => resolveBrainOptions({ replyPath: "psychic" as never })).toThrow(/replyPath/);
    expect(() => resolveBrainOptions({ apologyText: " " })).toThrow(/apologyText/);
    expect(() => resolveBrainOptions({ ttsPrefetch: -1 })).toThrow(/ttsPrefetch/);
  });

  it("native and bridge are provider-native; brain is transport-only", () => {
    expect(toolOwnershipOf("native")).toBe("provider_native");
    expect(toolOwnershipOf("bridge")).toBe("provider_native");
    expect(toolOwnershipOf("brain")).toBe("transport_only");
  });
});
