/**
 * A streaming windowed-sinc resampler for mono Float32 audio (the page's
 * microphone at the browser's rate -> the session's input rate). Shared by
 * the capture worklet and the benchmark; plain JavaScript, no DOM.
 *
 * The kernel is a Blackman-windowed sinc with its cutoff just under the lower
 * Nyquist frequency (so 48 kHz -> 16 kHz does not alias), tabulated once at
 * KERNEL_STEPS points per input sample and read with linear interpolation.
 */

/** Zero crossings of the sinc on each side, at the output rate. */
const ZERO_CROSSINGS = 8;
/** Table resolution: points per input sample. */
const KERNEL_STEPS = 128;

export class Resampler {
  /**
   * @param {number} inRate input sample rate, Hz
   * @param {number} outRate output sample rate, Hz
   */
  constructor(inRate, outRate) {
    if (!(inRate > 0) || !(outRate > 0)) throw new RangeError("sample rates must be positive");
    this.inRate = inRate;
    this.outRate = outRate;
    /** Input samples per output sample. */
    this.step = inRate / outRate;
    this.passthrough = inRate === outRate;
    // Cutoff as a fraction of the input Nyquist frequency, a little under the output's.
    const cutoff = Math.min(1, outRate / inRate) * 0.94;
    this.cutoff = cutoff;
    /** Half-width of the kernel, in input samples. */
    this.width = Math.ceil(ZERO_CROSSINGS / cutoff);
    this.table = kernelTable(this.width, cutoff);
    this.buffer = new Float32Array(this.width);
    this.length = this.width;
    /** Position of the next output sample in `buffer`, in input samples. */
    this.position = this.width;
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
    const { buffer, table, width, step, cutoff } = this;
    const room = this.length - 1 - width - this.position;
    const count = room < 0 ? 0 : Math.floor(room / step) + 1;
    const out = new Float32Array(count);
    let t = this.position;
    for (let n = 0; n < count; n++) {
      const first = Math.ceil(t - width);
      const last = Math.floor(t + width);
      let acc = 0;
      for (let k = first; k <= last; k++) {
        const x = Math.abs(t - k) * KERNEL_STEPS;
        const i = x | 0;
        const frac = x - i;
        const h = table[i] + (table[i + 1] - table[i]) * frac;
        acc += buffer[k] * h;
      }
      out[n] = acc * cutoff;
      t += step;
    }
    // Keep what the next outputs still need.
    const keepFrom = Math.max(0, Math.floor(t - width));
    this.buffer.copyWithin(0, keepFrom, this.length);
    this.length -= keepFrom;
    this.position = t - keepFrom;
    return out;
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

/** sinc(cutoff * t) * Blackman window over |t| <= width, at KERNEL_STEPS points per sample (+2 guard points). */
function kernelTable(width, cutoff) {
  const size = width * KERNEL_STEPS + 2;
  const table = new Float32Array(size);
  for (let i = 0; i < size; i++) {
    const t = i / KERNEL_STEPS;
    if (t > width) break;
    const x = Math.PI * cutoff * t;
    const sinc = t === 0 ? 1 : Math.sin(x) / x;
    const w = 0.42 + 0.5 * Math.cos((Math.PI * t) / width) + 0.08 * Math.cos((2 * Math.PI * t) / width);
    table[i] = sinc * w;
  }
  return table;
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
