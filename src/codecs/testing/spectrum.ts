/** Test-only spectral measurements for the resampler quality goals (transforms by fft.js). */
import FFT from "fft.js";

/** Power per frequency bin (one-sided), with the frequency of each bin. */
export function powerSpectrum(
  x: ArrayLike<number>,
  rate: number,
  size?: number,
): { power: Float64Array; hz: (bin: number) => number } {
  let n = 4; // fft.js's smallest size
  while (n < (size ?? x.length)) n <<= 1;
  const input = new Float64Array(n);
  for (let i = 0; i < Math.min(n, x.length); i++) input[i] = x[i]!;
  const fft = new FFT(n);
  const out = fft.createComplexArray() as number[];
  fft.realTransform(out, input);
  const power = new Float64Array(n / 2 + 1);
  for (let k = 0; k <= n / 2; k++) power[k] = out[2 * k]! ** 2 + out[2 * k + 1]! ** 2;
  return { power, hz: (bin) => (bin * rate) / n };
}

/** SNR in dB of `test` against `ref` (same rate) counting only frequencies up to `bandHz`. */
export function inBandSnrDb(ref: Int16Array, test: Int16Array, rate: number, bandHz: number): number {
  const n = Math.min(ref.length, test.length);
  const diff = new Float64Array(n);
  for (let i = 0; i < n; i++) diff[i] = test[i]! - ref[i]!;
  const r = powerSpectrum(ref.subarray(0, n), rate);
  const d = powerSpectrum(diff, rate);
  let signal = 0;
  let noise = 0;
  for (let k = 0; k < r.power.length; k++) {
    if (r.hz(k) > bandHz) break;
    signal += r.power[k]!;
    noise += d.power[k]!;
  }
  return 10 * Math.log10(signal / noise);
}

/**
 * Share of the power of `x` above `fromHz`, in dB. A 7-term Blackman-Harris
 * window keeps the leakage of an in-band tone (sidelobes below -180 dB) from
 * reading as out-of-band energy.
 */
export function powerAboveDb(x: Int16Array, rate: number, fromHz: number): number {
  const n = x.length;
  const w = new Float64Array(n);
  const a = [
    0.27105140069342, -0.43329793923448, 0.21812299954311, -0.06592544638803, 0.01081174209837,
    -0.00077658482522, 0.00001388721735,
  ];
  for (let i = 0; i < n; i++) {
    let v = 0;
    for (let k = 0; k < a.length; k++) v += a[k]! * Math.cos((2 * Math.PI * k * i) / (n - 1));
    w[i] = x[i]! * v;
  }
  const s = powerSpectrum(w, rate);
  let above = 0;
  let total = 0;
  for (let k = 0; k < s.power.length; k++) {
    total += s.power[k]!;
    if (s.hz(k) > fromHz) above += s.power[k]!;
  }
  return 10 * Math.log10(above / total);
}

export function sine(rate: number, hz: number, seconds: number, amplitude: number, channels = 1): Int16Array {
  const n = Math.round(rate * seconds);
  const out = new Int16Array(n * channels);
  for (let i = 0; i < n; i++) {
    const v = Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / rate));
    for (let c = 0; c < channels; c++) out[i * channels + c] = v;
  }
  return out;
}

/** Mean power of `x` in dB relative to the mean power of `reference`. */
export function powerRatioDb(x: Int16Array, reference: Int16Array): number {
  let px = 0;
  for (let i = 0; i < x.length; i++) px += x[i]! * x[i]!;
  let pr = 0;
  for (let i = 0; i < reference.length; i++) pr += reference[i]! * reference[i]!;
  return 10 * Math.log10(px / x.length / (pr / reference.length));
}
