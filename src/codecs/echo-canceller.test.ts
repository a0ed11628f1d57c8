/**
 * The echo canceller on real speech (pocketsphinx-testdata) through a phone
 * echo path: the assistant's audio returned delayed, attenuated (echo return
 * loss), smeared by a short line response and u-law coded, as a speakerphone
 * or a leaky line does. Figures are energy ratios, not times.
 */
import { afterEach, describe, expect, it } from "vitest";
import { isCodecError } from "./codec-error.js";
import { createEchoCanceller, type EchoCanceller } from "./echo-canceller.js";
import { loadSpeech } from "./testing/audio-tools.js";
import { phoneLine } from "./testing/phone-line.js";

const RATE = 8000;
const open: EchoCanceller[] = [];
afterEach(() => {
  for (const c of open.splice(0)) c.close();
});

function energy(pcm: Int16Array, from = 0, to = pcm.length): number {
  let sum = 0;
  for (let i = from; i < to; i++) sum += pcm[i]! * pcm[i]!;
  return sum / Math.max(1, to - from);
}

/** Runs far/mic through a canceller in 20 ms steps, reference first (played, then heard). */
function cancel(canceller: EchoCanceller, far: Int16Array, mic: Int16Array): Int16Array {
  const step = canceller.frameSamples;
  const out = new Int16Array(mic.length);
  let written = 0;
  for (let at = 0; at + step <= mic.length; at += step) {
    canceller.played(far.subarray(at, at + step));
    const cleaned = canceller.process(mic.subarray(at, at + step));
    out.set(cleaned, written);
    written += cleaned.length;
  }
  return out;
}

describe("echo canceller (libspeexdsp)", () => {
  const far = loadSpeech("librivox/sense_and_sensibility_01_austen_64kb-0870.wav", RATE).subarray(
    0,
    RATE * 8,
  );

  for (const [delayMs, lossDb] of [
    [20, 6],
    [120, 12],
    [250, 6],
  ] as const) {
    it(`removes an echo delayed ${delayMs} ms at ${lossDb} dB loss by more than 10 dB once converged`, () => {
      const canceller = createEchoCanceller({ sampleRate: RATE, tailMs: 300 });
      open.push(canceller);
      const mic = phoneLine(far, delayMs, lossDb);
      const out = cancel(canceller, far, mic);
      // Echo return loss enhancement over the last 4 s (the filter converges within the first seconds).
      const from = RATE * 4;
      const erleDb = 10 * Math.log10(energy(mic, from) / Math.max(1, energy(out, from)));
      expect(erleDb).toBeGreaterThan(10);
    });
  }

  it("keeps the caller's own speech while the assistant talks (double talk)", () => {
    const canceller = createEchoCanceller({ sampleRate: RATE });
    open.push(canceller);
    const near = loadSpeech("goforward.raw", RATE);
    const echo = phoneLine(far, 100, 6);
    // The caller starts speaking 5 s in, over the assistant's echo.
    const start = RATE * 5;
    const mic = echo.slice();
    for (let i = 0; i < near.length && start + i < mic.length; i++)
      mic[start + i] = Math.max(-32768, Math.min(32767, mic[start + i]! + near[i]!));
    const out = cancel(canceller, far, mic);
    const end = Math.min(mic.length, start + near.length);
    const nearEnergy = energy(near, 0, end - start);
    const outEnergy = energy(out, start, end);
    // Within 6 dB of the caller's speech: not cancelled with the echo.
    expect(10 * Math.log10(outEnergy / nearEnergy)).toBeGreaterThan(-6);
  });

  it("with doubleTalk, tells its residual echo (explained by the reference at the delay) from a caller over it", () => {
    const canceller = createEchoCanceller({ sampleRate: RATE, doubleTalk: true });
    open.push(canceller);
    const near = loadSpeech("goforward.raw", RATE);
    const echo = phoneLine(far, 100, 6);
    // The caller, as loud as the echo (an echo return of 6 dB: the hardest double talk), from 5 s on.
    const start = RATE * 5;
    const gain = Math.sqrt(energy(echo, start) / energy(near, 0, echo.length - start));
    const mic = echo.slice();
    for (let i = 0; i < near.length && start + i < mic.length; i++)
      mic[start + i] = Math.max(-32768, Math.min(32767, Math.round(mic[start + i]! + near[i]! * gain)));
    const step = canceller.frameSamples;
    const residual: number[] = [];
    const overAnswer: number[] = [];
    for (let at = 0; at + step <= mic.length; at += step) {
      canceller.played(far.subarray(at, at + step));
      canceller.process(mic.subarray(at, at + step));
      // The delay, 100 ms, is frame 5: the guard asks two frames either side of its estimate.
      const explained = canceller.explainedWithin!(3, 7);
      if (at >= RATE * 2 && at + step <= start && energy(echo, at, at + step) > 32768 ** 2 * 1e-4)
        residual.push(explained);
      const callerLevel = energy(near, at - start, at - start + step) * gain * gain;
      if (at >= start && callerLevel > 2 * energy(echo, at, at + step) && callerLevel > 32768 ** 2 * 1e-4)
        overAnswer.push(explained);
    }
    const mean = (v: number[]): number => v.reduce((a, b) => a + b, 0) / v.length;
    expect(residual.length).toBeGreaterThan(50);
    expect(overAnswer.length).toBeGreaterThan(10);
    const under = (v: number[]): number => v.filter((x) => x < 0.2).length / v.length;
    // Measured: residual echo 0.41 on average, 2% of its frames under the guard's 0.2; the caller 0.22, 45%.
    expect(under(residual)).toBeLessThan(0.1);
    expect(under(overAnswer)).toBeGreaterThan(0.3);
    expect(mean(overAnswer)).toBeLessThan(mean(residual) * 0.75);
  });

  it("offers explainedWithin (and beyond chance) only with doubleTalk, and doubleTalk only on 20 ms frames", () => {
    const plain = createEchoCanceller({ sampleRate: RATE });
    open.push(plain);
    expect(plain.explainedWithin).toBeUndefined();
    expect(plain.explainedBeyondChanceWithin).toBeUndefined();
    const measured = createEchoCanceller({ sampleRate: RATE, doubleTalk: true });
    open.push(measured);
    expect(measured.explainedWithin!(0, 15)).toBe(0);
    expect(measured.explainedBeyondChanceWithin!(0, 15)).toBe(0);
    try {
      createEchoCanceller({ sampleRate: RATE, frameMs: 10, doubleTalk: true });
      expect.unreachable();
    } catch (err) {
      expect(isCodecError(err) && err.code).toBe("invalid_options");
      expect((err as Error).message).toContain("doubleTalk");
    }
  });

  it("passes the caller through when nothing was played", () => {
    const canceller = createEchoCanceller({ sampleRate: RATE });
    open.push(canceller);
    const near = loadSpeech("goforward.raw", RATE).subarray(0, RATE * 2);
    const out = canceller.process(near);
    expect(out.length).toBe(near.length - (near.length % canceller.frameSamples));
    expect(10 * Math.log10(energy(out) / energy(near, 0, out.length))).toBeGreaterThan(-3);
  });

  it("with nothing played, puts its input out through speexdsp's DC notch: the voice's lowest partials go, 0.5-3 dB of speech at 8 kHz", () => {
    // mdf.c high-passes the caller channel before the filter (a notch at DC, radius 0.9 under 12 kHz: about
    // -2.3 dB at 200 Hz on a line). So an output frame stands under its input with no echo taken off at all, by
    // what the voice has under 200 Hz: the echo guard's bounds on the output against its input (double-talk.ts:
    // MAX_KEPT, MIN_KEPT) were measured with this in them, on 8 kHz lines.
    const tone = (hz: number) =>
      Int16Array.from({ length: RATE }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / RATE)));
    const lossDb = (input: Int16Array) => {
      const canceller = createEchoCanceller({ sampleRate: RATE });
      open.push(canceller);
      const out = canceller.process(input);
      // Past the notch's first 100 ms (its state starting from rest).
      return 10 * Math.log10(energy(out, RATE / 10) / energy(input, RATE / 10, out.length));
    };
    expect(Math.abs(lossDb(tone(1000)))).toBeLessThan(0.2);
    expect(lossDb(tone(100))).toBeLessThan(-8);
    const speech = lossDb(loadSpeech("goforward.raw", RATE));
    expect(speech).toBeLessThan(-0.5);
    expect(speech).toBeGreaterThan(-3);
  });

  it("adds no delay without denoise; with denoise its preprocessor's overlap-add delays the output by a frame", () => {
    // White noise: speech's low frequencies, which the filter's DC notch and pre-emphasis reshape, would blur it.
    let seed = 3;
    const near = new Int16Array(RATE * 2).map(() => {
      seed = (seed * 1_103_515_245 + 12_345) >>> 0;
      return Math.round(((seed / 2 ** 32) * 2 - 1) * 3000);
    });
    /** Output-to-input error energy, dB under the input, with the output read `lag` samples late. */
    const error = (out: Int16Array, lag: number): number => {
      let diff = 0;
      for (let i = RATE; i < out.length; i++) diff += (out[i]! - near[i - lag]!) ** 2;
      return 10 * Math.log10(diff / (energy(near, RATE - lag, out.length - lag) * (out.length - RATE)));
    };
    const plain = createEchoCanceller({ sampleRate: RATE });
    const denoised = createEchoCanceller({ sampleRate: RATE, denoise: true });
    open.push(plain, denoised);
    expect(plain.outputLagMs).toBe(0);
    expect(denoised.outputLagMs).toBe(20);
    const silence = new Int16Array(near.length);
    const out = cancel(plain, silence, near);
    expect(error(out, 0)).toBeLessThan(error(out, plain.frameSamples) - 6);
    const late = cancel(denoised, silence, near);
    // (Closer only: the denoiser takes part of the steady noise off.)
    expect(error(late, denoised.frameSamples)).toBeLessThan(error(late, 0) - 2);
  });

  it("buffers partial frames and refuses bad options and use after close", () => {
    const canceller = createEchoCanceller({ sampleRate: RATE });
    expect(canceller.process(new Int16Array(100)).length).toBe(0);
    expect(canceller.process(new Int16Array(100)).length).toBe(160);
    canceller.close();
    canceller.close();
    expect(() => canceller.process(new Int16Array(160))).toThrow(/closed/);
    for (const bad of [
      { sampleRate: 7000 },
      { sampleRate: 8000, tailMs: 5000 },
      { sampleRate: 8000, frameMs: 30 },
    ])
      try {
        createEchoCanceller(bad);
        expect.unreachable();
      } catch (err) {
        expect(isCodecError(err) && err.code).toBe("invalid_options");
      }
  });
});
