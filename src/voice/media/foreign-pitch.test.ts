import { describe, expect, it } from "vitest";
import { ForeignPitch } from "./foreign-pitch.js";

const RATE = 8000;
const FRAME = RATE / 50;

/** `frames` 20 ms frames of a voice-like pulse train: harmonics of `f0` Hz falling off, at `amplitude`. */
function voice(f0: number, frames: number, amplitude = 4000, phase = 0): Int16Array[] {
  const out: Int16Array[] = [];
  for (let k = 0; k < frames; k++) {
    const frame = new Int16Array(FRAME);
    for (let i = 0; i < FRAME; i++) {
      const t = (k * FRAME + i) / RATE;
      let v = 0;
      for (let h = 1; h * f0 < 3400; h++) v += Math.sin(2 * Math.PI * h * f0 * t + phase * h) / h;
      frame[i] = Math.round(amplitude * 0.5 * v);
    }
    out.push(frame);
  }
  return out;
}

function mix(a: Int16Array[], b: Int16Array[]): Int16Array[] {
  return a.map((f, k) => Int16Array.from(f, (v, i) => v + b[k]![i]!));
}

function noise(frames: number, seed = 1): Int16Array[] {
  let s = seed;
  return Array.from({ length: frames }, () =>
    Int16Array.from({ length: FRAME }, () => {
      s = (s * 1103515245 + 12345) % 2 ** 31;
      return Math.round((s / 2 ** 31 - 0.5) * 4000);
    }),
  );
}

/** The foreign pitch of the last output frame, the reference and output fed frame by frame; the echo `delay` frames late. */
function foreignAfter(reference: Int16Array[], output: Int16Array[], delay: number): number {
  const pitch = new ForeignPitch(RATE, 15);
  for (let k = 0; k < output.length; k++) {
    pitch.played(reference[k] ?? new Int16Array(FRAME));
    pitch.output(output[k]!);
  }
  return pitch.foreign(delay - 3, delay + 5);
}

describe("ForeignPitch", () => {
  const answer = voice(110, 12);
  /** The answer's echo `delay` frames late, a quarter of its amplitude lost. */
  const echo = (delay: number) => [
    ...Array.from({ length: delay }, () => new Int16Array(FRAME)),
    ...answer.map((f) => Int16Array.from(f, (v) => v / 4)),
  ];

  it("reads an echo of the reference as no foreign voice", () => {
    expect(foreignAfter(answer, echo(4).slice(0, 12), 4)).toBeLessThan(0.5);
  });

  it("reads a second voice over the echo, as loud as it, as foreign", () => {
    const caller = voice(190, 12, 1000, 0.7);
    expect(foreignAfter(answer, mix(echo(4).slice(0, 12), caller), 4)).toBeGreaterThan(0.75);
  });

  it("reads a second voice as clearly foreign from its first 40 ms, where a third of the 60 ms window is the echo's alone", () => {
    // The caller starts two frames before the frame asked about. The 60 ms window alone reads 0.76, at the guard's
    // 0.75; with the 40 ms one (ONSET_WINDOW_FRAMES), 0.87.
    const caller = [...Array.from({ length: 10 }, () => new Int16Array(FRAME)), ...voice(190, 2, 1000, 0.7)];
    expect(foreignAfter(answer, mix(echo(4).slice(0, 12), caller), 4)).toBeGreaterThan(0.85);
  });

  it("does not weigh a voice against a reference with no pitch of its own (noise, silence)", () => {
    const caller = voice(190, 12, 1000);
    expect(foreignAfter(noise(12), caller, 4)).toBe(0);
    expect(foreignAfter([], caller, 4)).toBe(0);
  });

  it("reads noise over the echo as no foreign voice", () => {
    expect(foreignAfter(answer, mix(echo(4).slice(0, 12), noise(12, 7)), 4)).toBeLessThan(0.5);
  });

  it("analyses a 48 kHz leg at about 8 kHz, with the same verdicts", () => {
    const up = (frames: Int16Array[]) =>
      frames.map((f) => Int16Array.from({ length: f.length * 6 }, (_, i) => f[Math.floor(i / 6)]!));
    const pitch = new ForeignPitch(48_000, 15);
    const output = mix(echo(4).slice(0, 12), voice(190, 12, 1000, 0.7));
    const [ref48, out48] = [up(answer), up(output)];
    for (let k = 0; k < 12; k++) {
      pitch.played(ref48[k]!);
      pitch.output(out48[k]!);
    }
    expect(pitch.foreign(1, 9)).toBeGreaterThan(0.75);
  });

  describe("echoPitch: how much of a voiced echo the output still holds", () => {
    /** The echo pitch of the last output frame, fed as foreignAfter feeds them, 5 voiced frames asked for. */
    function echoPitchAfter(
      reference: Int16Array[],
      output: Int16Array[],
      delay: number,
    ): number | undefined {
      const pitch = new ForeignPitch(RATE, 15);
      for (let k = 0; k < output.length; k++) {
        pitch.played(reference[k] ?? new Int16Array(FRAME));
        pitch.output(output[k]!);
      }
      return pitch.echoPitch(delay - 3, delay + 5, 5);
    }

    it("reads the answer's echo as holding its pitch", () => {
      expect(echoPitchAfter(answer, echo(4).slice(0, 12), 4)).toBeGreaterThan(0.8);
    });

    it("...and a pitch gliding a little within the window still, each period read give or take 2 samples", () => {
      // The reference's period measured per frame; the echo's voice 2% lower (1.5 samples at 110 Hz).
      expect(echoPitchAfter(answer, voice(108, 12, 1000).slice(0, 12), 4)).toBeGreaterThan(0.8);
    });

    it("reads noise, or a caller's voice at another pitch, in place of the echo as holding none of it", () => {
      expect(echoPitchAfter(answer, noise(12, 3), 4)).toBeLessThan(0.2);
      expect(echoPitchAfter(answer, voice(190, 12, 1000, 0.7), 4)).toBeLessThan(0.2);
    });

    it("tells nothing where the answer around the delay is not voiced enough for its pitch to show", () => {
      expect(echoPitchAfter(noise(12), noise(12, 3), 4)).toBeUndefined();
      // Four voiced frames of the nine asked about, where five are asked for.
      const fourVoiced = [...noise(5), ...answer.slice(0, 4), ...noise(3)];
      expect(echoPitchAfter(fourVoiced, noise(12, 3), 4)).toBeUndefined();
    });
  });
});
