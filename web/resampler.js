/**
 * A streaming windowed-sinc resampler for mono Float32 audio (the page's
 * microphone at the browser's rate -> the session's input rate). Shared by
 * the capture worklet and the benchmark (bench/web-page-input.bench.ts);
 * plain JavaScript, no DOM.
 *
 * Polyphase: the rates' ratio is L/M in lowest terms (48 kHz -> 16 kHz is
 * 1/3, 44.1 kHz -> 16 kHz is 160/441), so output samples fall on L phases
 * between input samples, and each phase's Blackman-windowed sinc taps are
 * computed once. The cutoff sits just under the lower Nyquist frequency, so
 * downsampling does not alias. Positions are kept as integers: no drift.
 */

/** Zero crossings of the sinc on each side, at the lower rate. */
const ZERO_CROSSINGS = 12;
/** Cutoff as a fraction of the lower Nyquist frequency. */
const CUTOFF = 0.95;
/** Phase tables are built for ratios with at most this many phases (every common rate pair). */
const MAX_PHASES = 1024;

export class Resampler {
  /**
   * @param {number} inRate input sample rate, Hz (an integer)
   * @param {number} outRate output sample rate, Hz (an integer)
   */
  constructor(inRate, outRate) {
    if (!Number.isInteger(inRate) || !Number.isInteger(outRate) || inRate <= 0 || outRate <= 0)
      throw new RangeError("sample rates must be positive integers");
    this.passthrough = inRate === outRate;
    const g = gcd(inRate, outRate);
    /** Output phases per input sample (L) and input samples per L outputs (M). */
    this.phases = outRate / g;
    this.advance = inRate / g;
    if (this.phases > MAX_PHASES) throw new RangeError(`no resampler from ${inRate} Hz to ${outRate} Hz`);
    const cutoff = Math.min(1, outRate / inRate) * CUTOFF;
    /** Half-width of the kernel, in input samples. */
    this.width = Math.ceil(ZERO_CROSSINGS / cutoff);
    this.taps = buildPhases(this.phases, this.width, cutoff);
    this.buffer = new Float32Array(4096);
    // Start with `width` samples of silence so the first output is centred on the first input.
    this.length = this.width;
    /** Next output position: buffer index `index` plus `phase`/phases of a sample. */
    this.index = this.width;
    this.phase = 0;
  }

  /**
   * Resamples the next block; returns the output samples it completes (the
   * last `width` input samples wait for the next block).
   * @param {Float32Array} input
   * @returns {Float32Array}
   */
  process(input) {
    if (this.passthrough) return input.slice();
    this.#append(input);
    const { buffer, taps, width, phases, advance } = this;
    const span = 2 * width;
    const out = new Float32Array(Math.ceil(((this.length - this.index) * phases) / advance) + 1);
    let n = 0;
    let index = this.index;
    let phase = this.phase;
    // Output at index + phase/phases needs inputs index - width + 1 .. index + width.
    while (index + width < this.length) {
      const h = taps[phase];
      const first = index - width + 1;
      let acc = 0;
      for (let j = 0; j < span; j++) acc += buffer[first + j] * h[j];
      out[n++] = acc;
      phase += advance;
      index += Math.floor(phase / phases);
      phase %= phases;
    }
    // Keep what the next outputs still need.
    const keepFrom = index - width + 1;
    buffer.copyWithin(0, keepFrom, this.length);
    this.length -= keepFrom;
    this.index = index - keepFrom;
    this.phase = phase;
    return out.subarray(0, n);
  }

  #append(input) {
    const needed = this.length + input.length;
    if (needed > this.buffer.length) {
      const grown = new Float32Array(Math.max(needed, this.buffer.length * 2));
      grown.set(this.buffer.subarray(0, this.length));
      this.buffer = grown;
    }
    this.buffer.set(input, this.length);
    this.length = needed;
  }
}

/** Per phase p, the 2*width taps for inputs index-width+1 .. index+width of an output at index + p/phases. */
function buildPhases(phases, width, cutoff) {
  const out = [];
  for (let p = 0; p < phases; p++) {
    const h = new Float32Array(2 * width);
    let sum = 0;
    for (let j = 0; j < 2 * width; j++) {
      const t = p / phases + width - 1 - j; // distance from the output to input j, in input samples
      const x = Math.PI * cutoff * t;
      const sinc = t === 0 ? 1 : Math.sin(x) / x;
      const w =
        Math.abs(t) >= width
          ? 0
          : 0.42 + 0.5 * Math.cos((Math.PI * t) / width) + 0.08 * Math.cos((2 * Math.PI * t) / width);
      h[j] = sinc * w;
      sum += h[j];
    }
    // Unity gain at DC for every phase.
    for (let j = 0; j < h.length; j++) h[j] /= sum;
    out.push(h);
  }
  return out;
}

function gcd(a, b) {
  while (b) [a, b] = [b, a % b];
  return a;
}

/**
 * Float samples (-1..1) to PCM16, clamped.
 * @param {Float32Array} samples
 * @returns {Int16Array}
 */
export function floatToPcm16(samples) {
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    const s = Math.max(-1, Math.min(1, samples[i]));
    out[i] = s < 0 ? s * 0x8000 : s * 0x7fff;
  }
  return out;
}
