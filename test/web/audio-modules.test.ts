import { describe, expect, it } from "vitest";

/**
 * The talk page's audio modules (web/, plain browser ES modules without a DOM
 * dependency) run in Node as they run in the page's worklet and main thread.
 */
interface PageResampler {
  process(input: Float32Array): Float32Array;
}
interface ResamplerModule {
  Resampler: new (inRate: number, outRate: number) => PageResampler;
  floatToPcm16(samples: Float32Array): Int16Array;
}
interface DetectorModule {
  SpeechDetector: new (options?: Record<string, number>) => {
    speaking: boolean;
    process(levels: number[]): "start" | "end" | undefined;
  };
}

// Loaded by URL: browser modules without TypeScript declarations.
const load = async <T>(name: string): Promise<T> =>
  (await import(new URL(`../../web/${name}`, import.meta.url).href)) as T;
const { Resampler, floatToPcm16 } = await load<ResamplerModule>("resampler.js");
const { SpeechDetector } = await load<DetectorModule>("speech-detector.js");

function tone(rate: number, hz: number, seconds: number, amplitude = 0.5): Float32Array {
  return Float32Array.from(
    { length: Math.round(rate * seconds) },
    (_, n) => amplitude * Math.sin((2 * Math.PI * hz * n) / rate),
  );
}

/** Streams `x` through a fresh resampler in blocks of `block` samples. */
function resample(x: Float32Array, from: number, to: number, block = 128): Float32Array {
  const rs = new Resampler(from, to);
  const parts: Float32Array[] = [];
  for (let i = 0; i < x.length; i += block) parts.push(rs.process(x.subarray(i, i + block)));
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

const rms = (x: Float32Array): number => Math.sqrt(x.reduce((s, v) => s + v * v, 0) / x.length);

describe("the page's resampler", () => {
  for (const [from, to] of [
    [48_000, 16_000],
    [44_100, 16_000],
    [48_000, 24_000],
    [44_100, 24_000],
  ] as const) {
    it(`${from} -> ${to} Hz keeps a 1 kHz tone, removes what would alias, and keeps time`, () => {
      const pass = resample(tone(from, 1000, 2), from, to);
      // Output length: the ratio, less the filter's look-ahead (a few ms).
      expect(Math.abs(pass.length - 2 * to)).toBeLessThan(to / 100);
      expect(rms(pass.subarray(to / 10, to))).toBeCloseTo(0.5 / Math.SQRT2, 2);
      // Above the output's Nyquist: at least 40 dB down.
      const alias = resample(tone(from, to * 0.6, 2), from, to);
      expect(rms(alias.subarray(to / 10, to)) / (0.5 / Math.SQRT2)).toBeLessThan(0.01);
    });
  }

  it("gives the same samples whatever the block size", () => {
    const x = tone(48_000, 440, 0.5);
    const a = resample(x, 48_000, 16_000, 128);
    const b = resample(x, 48_000, 16_000, 1000);
    const n = Math.min(a.length, b.length);
    expect(n).toBeGreaterThan(7000);
    expect(Array.from(a.subarray(0, n))).toEqual(Array.from(b.subarray(0, n)));
  });

  it("passes equal rates through and refuses a rate that is not a positive integer", () => {
    const x = tone(16_000, 440, 0.1);
    expect(Array.from(new Resampler(16_000, 16_000).process(x))).toEqual(Array.from(x));
    expect(() => new Resampler(0, 16_000)).toThrow(RangeError);
    expect(() => new Resampler(44_100.5, 16_000)).toThrow(RangeError);
  });

  it("converts to PCM16 with clamping", () => {
    expect(Array.from(floatToPcm16(Float32Array.from([0, 1, -1, 2, -2, 0.5])))).toEqual([
      0, 32767, -32768, 32767, -32768, 16383,
    ]);
  });
});

describe("the page's speech detector", () => {
  const frames = (db: number, ms: number): number[] => Array.from({ length: ms / 10 }, () => db);

  it("starts after the onset time above the noise floor and ends after the hangover", () => {
    const d = new SpeechDetector({ onsetMs: 100, hangoverMs: 300 });
    expect(d.process(frames(-65, 2000))).toBeUndefined();
    expect(d.process(frames(-20, 90))).toBeUndefined();
    expect(d.process(frames(-20, 10))).toBe("start");
    expect(d.process(frames(-20, 1000))).toBeUndefined();
    expect(d.speaking).toBe(true);
    expect(d.process(frames(-65, 290))).toBeUndefined();
    expect(d.process(frames(-65, 10))).toBe("end");
  });

  it("never starts on steady noise, nor on a click shorter than the onset", () => {
    const d = new SpeechDetector({ onsetMs: 100 });
    expect(d.process(frames(-45, 5000))).toBeUndefined();
    expect(d.process([...frames(-10, 50), ...frames(-45, 500)])).toBeUndefined();
    expect(d.speaking).toBe(false);
  });
});
