/**
 * How much of an echo canceller's output the played reference still
 * explains: a double-talk detector by coherence. Residual echo is a linear
 * function of what was played (the line's response minus the filter's
 * estimate of it), so its spectrum is coherent with the reference's at the
 * echo's delay; the caller's speech is not, at any delay. So output that is
 * no louder than the echo could be can still be told apart: what the
 * reference does not explain is the caller talking over the answer.
 *
 * Per 20 ms frame: the spectra (Hann window, fft.js) of the last ~64 ms of
 * the output and of the reference, the cross- and auto-spectra smoothed over
 * frames for every lag (whole frames) the tail covers, and per lag the
 * fraction of the output's power in the speech band (300-3400 Hz) that the
 * reference explains linearly: the sum over bins of |Sxy|^2 / Sxx over the
 * sum of Syy (magnitude-squared coherence weighted by the output's power).
 * Smoothing 0.3 a frame (about six frames' memory): coherence estimated over
 * N frames is biased up by about 1/N for unrelated signals, so a caller's
 * speech reads 0.05-0.4 (mean 0.27 alone) and residual echo 0.4-0.9 at its
 * delay (echo-coherence.test.ts, echo-canceller.test.ts; docs/performance.md);
 * slower smoothing separated no better and let more babble through.
 *
 * That bias is largest where one frame outweighs the rest: a caller's first
 * loud frame over a quiet residual makes the estimate one frame's, which any
 * signal explains by itself. `explainedBeyondChanceWithin` takes off each
 * bin's share that unrelated signals would show over the same frames (the
 * smoothed |X|^2 |Y|^2, decay squared), so it reads a caller near 0 from the
 * first frame, and a residual the filter keeps changing (a lost echo) low too.
 *
 * While the reference has been silent for longer than the lags and the
 * window (the assistant not speaking), nothing is computed and every lag
 * reads 0: the frames then carry no echo to tell apart.
 */
import FFT from "fft.js";
import { CodecError } from "./codec-error.js";

export interface EchoCoherenceOptions {
  /** 8000 or 16000 (the line rates). */
  sampleRate: number;
  /** Lags (20 ms frames) kept: 0 (the output frame against the reference frame given with it) to this. */
  maxLagFrames: number;
  /** Weight of the newest frame in the smoothed spectra. Default 0.3. */
  smoothing?: number;
}

const LOW_HZ = 300;
const HIGH_HZ = 3400;
/** Bins read: every BIN_STEP-th of the speech band. */
const BIN_STEP = 2;

export class EchoCoherence {
  readonly #size: number;
  readonly #fft: FFT;
  readonly #hann: Float64Array;
  /** Scratch of the shared transform: the windowed input and the spectrum. */
  readonly #windowed: Float64Array;
  readonly #transform: number[];
  /** Decay of the smoothed spectra per frame (1 - smoothing). */
  readonly #decay: number;
  readonly #lowBin: number;
  readonly #bins: number;
  readonly #lags: number;
  /** Frames the reference may be silent before the lags and the window hold none of it. */
  readonly #quietLimit: number;
  /** The last `size` samples of each signal, newest last. */
  readonly #reference: Float32Array;
  readonly #output: Float32Array;
  /**
   * Per frame of the last `lags`, a ring (`#newest` the latest): the reference's spectrum (re, im
   * interleaved, every other bin of the speech band) and its smoothed power. A lag's smoothed reference
   * power is the newest frame's power that many frames back, so it is kept once, not per lag.
   */
  readonly #referenceSpectra: Float32Array[];
  readonly #referencePower: Float32Array[];
  #newest = 0;
  #quietFrames = Number.POSITIVE_INFINITY;
  /** Per lag: the smoothed cross-spectrum (re, im) of the output with the reference that many frames back. */
  readonly #cross: Float32Array[];
  /** Per lag: the smoothed |X|^2 |Y|^2 (decay squared): what |Sxy|^2 comes to by chance for unrelated signals. */
  readonly #chance: Float32Array[];
  readonly #outputPower: Float32Array;
  readonly #outputSpectrum: Float32Array;

  constructor(options: EchoCoherenceOptions) {
    const { sampleRate, maxLagFrames } = options;
    const alpha = options.smoothing ?? 0.3;
    if (!Number.isInteger(sampleRate) || sampleRate < 8000 || sampleRate > 48_000 || sampleRate % 50 !== 0)
      throw new CodecError(
        "invalid_options",
        `sampleRate must be a multiple of 50 from 8000 to 48000, got ${sampleRate}`,
      );
    if (!Number.isInteger(maxLagFrames) || maxLagFrames < 0 || maxLagFrames > 100)
      throw new CodecError("invalid_options", `maxLagFrames must be an integer 0-100, got ${maxLagFrames}`);
    if (!(alpha > 0 && alpha <= 1))
      throw new CodecError("invalid_options", `smoothing must be above 0 and at most 1, got ${alpha}`);
    const frame = sampleRate / 50;
    // About three frames (64 ms at 8 kHz): a window longer than the line's response and a frame's misalignment.
    let size = 2;
    while (size < frame * 3) size *= 2;
    this.#size = size;
    const shared = transformOf(size);
    this.#fft = shared.fft;
    this.#hann = shared.hann;
    this.#windowed = shared.windowed;
    this.#transform = shared.transform;
    this.#decay = 1 - alpha;
    const hz = sampleRate / size;
    this.#lowBin = Math.ceil(LOW_HZ / hz);
    // Every other bin: a Hann window's bins overlap their neighbours', so the skipped ones add little.
    this.#bins = Math.floor((Math.min(size / 2, Math.floor(HIGH_HZ / hz)) - this.#lowBin) / BIN_STEP) + 1;
    this.#lags = maxLagFrames + 1;
    this.#quietLimit = this.#lags + Math.ceil(size / frame);
    this.#reference = new Float32Array(size);
    this.#output = new Float32Array(size);
    // Single precision: a ratio test needs no more, and a phone leg keeps 21 lags of these (46 KB of buffers).
    this.#referenceSpectra = Array.from({ length: this.#lags }, () => new Float32Array(2 * this.#bins));
    this.#referencePower = Array.from({ length: this.#lags }, () => new Float32Array(this.#bins));
    this.#cross = Array.from({ length: this.#lags }, () => new Float32Array(2 * this.#bins));
    this.#chance = Array.from({ length: this.#lags }, () => new Float32Array(this.#bins));
    this.#outputPower = new Float32Array(this.#bins);
    this.#outputSpectrum = new Float32Array(2 * this.#bins);
  }

  /** One 20 ms frame: the reference played against it and the canceller's output for it. */
  frame(reference: Int16Array, output: Int16Array): void {
    this.#quietFrames = isSilent(reference) ? this.#quietFrames + 1 : 0;
    shiftIn(this.#reference, reference);
    shiftIn(this.#output, output);
    if (this.#quietFrames > this.#quietLimit) return this.#rest();
    const lags = this.#lags;
    const bins = this.#bins;
    const decay = this.#decay;
    // The spectra are smoothed unscaled (s = decay * s + new): the ratios read from them do not change.
    const previous = this.#newest;
    this.#newest = (previous + 1) % lags;
    const x0 = this.#referenceSpectra[this.#newest]!;
    this.#spectrum(this.#reference, x0);
    const power = this.#referencePower[this.#newest]!;
    const before = this.#referencePower[previous]!;
    for (let k = 0; k < bins; k++)
      power[k] = decay * before[k]! + x0[2 * k]! * x0[2 * k]! + x0[2 * k + 1]! * x0[2 * k + 1]!;
    const y = this.#outputSpectrum;
    this.#spectrum(this.#output, y);
    const outputPower = this.#outputPower;
    for (let k = 0; k < bins; k++)
      outputPower[k] = decay * outputPower[k]! + y[2 * k]! * y[2 * k]! + y[2 * k + 1]! * y[2 * k + 1]!;
    const chanceDecay = decay * decay;
    for (let lag = 0; lag < lags; lag++) {
      const x = this.#referenceSpectra[(this.#newest - lag + lags) % lags]!;
      const cross = this.#cross[lag]!;
      const chance = this.#chance[lag]!;
      for (let k = 0, re = 0; k < bins; k++, re += 2) {
        const im = re + 1;
        const xr = x[re]!;
        const xi = x[im]!;
        const yr = y[re]!;
        const yi = y[im]!;
        // The output's spectrum times the reference's conjugate.
        cross[re] = decay * cross[re]! + yr * xr + yi * xi;
        cross[im] = decay * cross[im]! + yi * xr - yr * xi;
        chance[k] = chanceDecay * chance[k]! + (xr * xr + xi * xi) * (yr * yr + yi * yi);
      }
    }
  }

  /**
   * The largest fraction (0-1) of the output's power, as of the last frame, that the reference explains
   * at a lag of `from`..`to` frames (clamped to those kept): per lag, the sum over bins of |Sxy|^2 / Sxx
   * over the sum of Syy.
   */
  explainedWithin(from: number, to: number): number {
    return this.#explainedMax(from, to, false);
  }

  /**
   * As explainedWithin, less what the reference would explain of an unrelated output by chance over the
   * frames smoothed (per bin: |Sxy|^2 less the smoothed |X|^2 |Y|^2), so 0 where the output is unrelated,
   * however few frames the estimate rests on.
   */
  explainedBeyondChanceWithin(from: number, to: number): number {
    return this.#explainedMax(from, to, true);
  }

  #explainedMax(from: number, to: number, beyondChance: boolean): number {
    const bins = this.#bins;
    let outputSum = 0;
    for (let k = 0; k < bins; k++) outputSum += this.#outputPower[k]!;
    if (!(outputSum > 0)) return 0;
    let max = 0;
    const last = Math.min(this.#lags - 1, to);
    for (let lag = Math.max(0, from); lag <= last; lag++) {
      const cross = this.#cross[lag]!;
      const chance = this.#chance[lag]!;
      const power = this.#referencePower[(this.#newest - lag + this.#lags) % this.#lags]!;
      let explained = 0;
      for (let k = 0; k < bins; k++) {
        const pxx = power[k]!;
        if (pxx > 0)
          explained += (cross[2 * k]! ** 2 + cross[2 * k + 1]! ** 2 - (beyondChance ? chance[k]! : 0)) / pxx;
      }
      max = Math.max(max, explained / outputSum);
    }
    return Math.min(1, max);
  }

  /** No reference within reach: nothing to explain, and the next speech starts from clean spectra. */
  #rest(): void {
    if (this.#quietFrames !== this.#quietLimit + 1) return;
    for (const a of [...this.#cross, ...this.#chance, ...this.#referencePower, ...this.#referenceSpectra])
      a.fill(0);
    this.#outputPower.fill(0);
  }

  #spectrum(samples: Float32Array, into: Float32Array): void {
    const windowed = this.#windowed;
    for (let i = 0; i < this.#size; i++) windowed[i] = samples[i]! * this.#hann[i]!;
    const out = this.#transform;
    this.#fft.realTransform(out, windowed);
    for (let k = 0, j = 2 * this.#lowBin; k < 2 * this.#bins; k += 2, j += 2 * BIN_STEP) {
      into[k] = out[j]!;
      into[k + 1] = out[j + 1]!;
    }
  }
}

/**
 * One transform and window per size for the whole process: fft.js keeps its twiddle table per instance
 * (8 KB at 512 points) and a transform runs to its end synchronously, so legs can share one.
 */
interface SharedTransform {
  fft: FFT;
  hann: Float64Array;
  windowed: Float64Array;
  transform: number[];
}
const transforms = new Map<number, SharedTransform>();
function transformOf(size: number): SharedTransform {
  let shared = transforms.get(size);
  if (!shared) {
    const fft = new FFT(size);
    shared = {
      fft,
      hann: Float64Array.from({ length: size }, (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / size)),
      windowed: new Float64Array(size),
      transform: fft.createComplexArray() as number[],
    };
    transforms.set(size, shared);
  }
  return shared;
}

function isSilent(pcm: Int16Array): boolean {
  for (let i = 0; i < pcm.length; i++) if (pcm[i] !== 0) return false;
  return true;
}

/** Shifts `frame` into the end of `window` (a sliding window, newest last). */
function shiftIn(window: Float32Array, frame: Int16Array): void {
  const n = Math.min(frame.length, window.length);
  window.copyWithin(0, n);
  const start = window.length - n;
  const from = frame.length - n;
  for (let i = 0; i < n; i++) window[start + i] = frame[from + i]!;
}
