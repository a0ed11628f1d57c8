import { describe, expect, it } from "vitest";
import { decodeMulaw, encodeMulaw } from "./index.js";
import { detectDtmf, dtmfFrequencies, dtmfTones } from "./dtmf.js";

function noise(n: number, amplitude: number, seed = 1): Int16Array {
  let s = seed;
  return Int16Array.from({ length: n }, () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return Math.round(((s / 0x7fffffff) * 2 - 1) * amplitude);
  });
}

describe("dtmf", () => {
  it("uses the Q.23 frequency pairs", () => {
    expect(dtmfFrequencies("1")).toEqual([697, 1209]);
    expect(dtmfFrequencies("0")).toEqual([941, 1336]);
    expect(dtmfFrequencies("#")).toEqual([941, 1477]);
    expect(dtmfFrequencies("D")).toEqual([941, 1633]);
    expect(dtmfFrequencies("x")).toBeUndefined();
  });

  it("tones of every key decode back to the same keys at 8 and 16 kHz", () => {
    for (const sampleRate of [8000, 16_000]) {
      const keys = "0123456789*#ABCD";
      expect(detectDtmf(dtmfTones(keys, { sampleRate }), { sampleRate })).toBe(keys);
    }
  });

  it("survive u-law, line noise at 20 dB below the tones, and a repeated key with its gap", () => {
    const tones = dtmfTones("1123#", { sampleRate: 8000, toneMs: 65, gapMs: 65 });
    const hiss = noise(tones.length, 1000);
    const noisy = Int16Array.from(tones, (v, i) => v + hiss[i]!);
    const line = decodeMulaw(encodeMulaw(noisy));
    expect(detectDtmf(line, { sampleRate: 8000 })).toBe("1123#");
  });

  it("a pause is silence of its own length; lengths follow the options", () => {
    const tones = dtmfTones("1w2", { sampleRate: 8000, toneMs: 100, gapMs: 80, pauseMs: 500 });
    expect(tones.length).toBe((180 + 500 + 180) * 8);
    expect(detectDtmf(tones, { sampleRate: 8000 })).toBe("12");
  });

  it("finds no keys in noise or a single sine", () => {
    expect(detectDtmf(noise(8000, 8000), { sampleRate: 8000 })).toBe("");
    const sine = Int16Array.from({ length: 8000 }, (_, i) =>
      Math.round(8000 * Math.sin((2 * Math.PI * 697 * i) / 8000)),
    );
    expect(detectDtmf(sine, { sampleRate: 8000 })).toBe("");
  });

  it("refuses bad keys and out-of-range options with invalid_audio", () => {
    expect(() => dtmfTones("12x", { sampleRate: 8000 })).toThrow(
      expect.objectContaining({ code: "invalid_audio" }),
    );
    expect(() => dtmfTones("1", { sampleRate: 8000, toneMs: 10 })).toThrow(
      expect.objectContaining({ code: "invalid_audio" }),
    );
    expect(() => dtmfTones("1", { sampleRate: 4000 })).toThrow(
      expect.objectContaining({ code: "invalid_audio" }),
    );
  });
});
