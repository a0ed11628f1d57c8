import { describe, expect, it } from "vitest";
import { CACHED_TEXT_MAX_CHARS, SynthesisCache } from "./synthesis-cache.js";
import { ESPEAK_OUTPUT_FORMAT } from "./espeak-tts.js";

const entry = (samples: number) => ({
  format: ESPEAK_OUTPUT_FORMAT,
  chunks: [new Int16Array(samples)],
});

describe("SynthesisCache", () => {
  it("drops the least recently used entries once over its bytes", () => {
    const cache = new SynthesisCache(3000);
    cache.set("a", entry(500)); // 1000 bytes each
    cache.set("b", entry(500));
    cache.set("c", entry(500));
    expect(cache.get("a")).toBeDefined(); // a is now the most recent: b goes first
    cache.set("d", entry(500));
    expect(cache.get("b")).toBeUndefined();
    expect([cache.get("a"), cache.get("c"), cache.get("d")].every(Boolean)).toBe(true);
    expect(cache.bytes).toBe(3000);
    expect(cache.size).toBe(3);
  });

  it("keeps nothing larger than itself, and counts a replaced entry once", () => {
    const cache = new SynthesisCache(3000);
    cache.set("big", entry(2000));
    expect(cache.size).toBe(0);
    cache.set("a", entry(500));
    cache.set("a", entry(1000));
    expect(cache.bytes).toBe(2000);
    cache.clear();
    expect([cache.size, cache.bytes]).toEqual([0, 0]);
  });

  it("keys a synthesis by binary, voice, rate and text, and refuses long texts", () => {
    const key = SynthesisCache.key("/usr/bin/espeak-ng", "en-us", 175, "One moment, please.");
    expect(key).not.toBe(SynthesisCache.key("/usr/bin/espeak-ng", "en-us", 176, "One moment, please."));
    expect(key).not.toBe(SynthesisCache.key("/usr/bin/espeak-ng", "en-gb", 175, "One moment, please."));
    expect(SynthesisCache.key("/b", "en-us", 175, "x".repeat(CACHED_TEXT_MAX_CHARS))).toBeDefined();
    expect(SynthesisCache.key("/b", "en-us", 175, "x".repeat(CACHED_TEXT_MAX_CHARS + 1))).toBeUndefined();
  });
});
