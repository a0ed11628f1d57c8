import { describe, expect, it } from "vitest";
import { createOpusEncoder } from "../../codecs/index.js";
import { silencePayload, type CaptureFrame } from "./capture-framing.js";
import { TrackDecoder } from "./track-decoder.js";

const silence = (samples: number, sampleRate = 48_000): CaptureFrame => ({
  kind: "silence",
  trackId: "t",
  channels: 1,
  sampleRate,
  payload: silencePayload(samples),
});

describe("TrackDecoder", () => {
  it("turns a silence frame into as many zeros at 16 kHz, carrying fractions of a sample over", () => {
    const decoder = new TrackDecoder("t");
    const out = decoder.decode(silence(4800));
    expect(out.length).toBe(1600);
    expect(out.every((s) => s === 0)).toBe(true);
    // 44.1 kHz: 100 ms is 4410 samples, 1600 at 16 kHz; 10 frames of 441 (10 ms, 160 each) add up exactly.
    let total = 0;
    for (let i = 0; i < 10; i++) total += decoder.decode(silence(441, 44_100)).length;
    expect(total).toBe(1600);
    // Odd counts at 48 kHz: 7 x 1001 samples = 7007 -> 2335.67 at 16 kHz; the fraction is not lost per frame.
    let odd = 0;
    for (let i = 0; i < 7; i++) odd += decoder.decode(silence(1001)).length;
    expect(odd).toBe(2335);
    decoder.close();
  });

  it("decodes Opus on after a silence frame, the gap as zeros between the packets' audio", () => {
    const encoder = createOpusEncoder({ sampleRate: 48_000, channels: 1 });
    const tone = new Int16Array(960).map((_, i) =>
      Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 48_000)),
    );
    const opus = (): CaptureFrame => ({
      kind: "opus",
      trackId: "t",
      channels: 1,
      sampleRate: 48_000,
      payload: encoder.encode(tone),
    });
    const decoder = new TrackDecoder("t");
    const before = decoder.decode(opus());
    const gap = decoder.decode(silence(48_000));
    const after = decoder.decode(opus());
    expect(before.length).toBe(320);
    expect(gap.length).toBe(16_000);
    expect(after.length).toBe(320);
    expect(Math.max(...after.map(Math.abs))).toBeGreaterThan(1000);
    encoder.close();
    decoder.close();
  });
});
