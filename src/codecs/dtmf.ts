/**
 * DTMF as audio (ITU-T Q.23 frequency pairs): tones synthesised into a call's
 * outbound audio where a carrier has no native "send digits" command, and a
 * Goertzel detector that reads digits back out of PCM (tests decode what the
 * carrier stand-in received; a carrier that forwards no DTMF events could use
 * it on the caller's audio).
 *
 * Written here rather than taken from npm: the tone is two sines summed, the
 * detector eight Goertzel filters per block, and the npm packages found
 * (dtmf-detection-stream, play-dtmf) are stream- or Web-Audio-bound and
 * little used.
 */
import { CodecError } from "./codec-error.js";

const LOW = [697, 770, 852, 941] as const;
const HIGH = [1209, 1336, 1477, 1633] as const;
const KEYS = ["123A", "456B", "789C", "*0#D"] as const;

export interface DtmfToneOptions {
  sampleRate: number;
  /** Tone length per digit, ms (Q.24 asks at least 40; carriers commonly want 65+). Default 100. */
  toneMs?: number;
  /** Silence after each digit, ms. Default 80. */
  gapMs?: number;
  /** Silence for a `w` (pause), ms. Default 500. */
  pauseMs?: number;
  /** Level of each of the two tones, dBFS. Default -9 (a sum peaking near -3 dBFS). */
  levelDbfs?: number;
}

/** The frequency pair of a key, or undefined for anything else. */
export function dtmfFrequencies(key: string): readonly [number, number] | undefined {
  for (let row = 0; row < 4; row++) {
    const col = KEYS[row]!.indexOf(key.toUpperCase());
    if (col >= 0) return [LOW[row]!, HIGH[col]!];
  }
  return undefined;
}

/** PCM16 mono of `digits` (0-9, *, #, A-D; `w` a pause), each tone followed by its gap. */
export function dtmfTones(digits: string, options: DtmfToneOptions): Int16Array {
  const rate = options.sampleRate;
  const toneMs = options.toneMs ?? 100;
  const gapMs = options.gapMs ?? 80;
  const pauseMs = options.pauseMs ?? 500;
  const level = options.levelDbfs ?? -9;
  if (!Number.isInteger(rate) || rate < 8000 || rate > 48_000)
    throw new CodecError("invalid_audio", `dtmf: sampleRate must be 8000..48000, got ${String(rate)}`);
  for (const [name, v, min, max] of [
    ["toneMs", toneMs, 40, 2000],
    ["gapMs", gapMs, 40, 2000],
    ["pauseMs", pauseMs, 0, 10_000],
    ["levelDbfs", level, -40, -3],
  ] as const) {
    if (!Number.isFinite(v) || v < min || v > max)
      throw new CodecError("invalid_audio", `dtmf: ${name} must be ${min}..${max}, got ${String(v)}`);
  }
  const amplitude = 32767 * 10 ** (level / 20);
  const samples = (ms: number): number => Math.round((ms * rate) / 1000);
  const parts: Int16Array[] = [];
  for (const key of digits) {
    if (key === "w" || key === "W") {
      parts.push(new Int16Array(samples(pauseMs)));
      continue;
    }
    const pair = dtmfFrequencies(key);
    if (!pair) throw new CodecError("invalid_audio", `dtmf: "${key}" is not a keypad key`);
    const n = samples(toneMs);
    const tone = new Int16Array(n + samples(gapMs));
    // 5 ms raised-cosine edges: no clicks that a detector could read as energy off the two frequencies.
    const ramp = Math.min(samples(5), n >> 1);
    for (let i = 0; i < n; i++) {
      const t = i / rate;
      const edge = i < ramp ? i / ramp : i >= n - ramp ? (n - 1 - i) / ramp : 1;
      const env = 0.5 - 0.5 * Math.cos(Math.PI * edge);
      tone[i] = Math.round(
        amplitude * env * (Math.sin(2 * Math.PI * pair[0] * t) + Math.sin(2 * Math.PI * pair[1] * t)),
      );
    }
    parts.push(tone);
  }
  const out = new Int16Array(parts.reduce((s, p) => s + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function goertzelPower(pcm: Int16Array, start: number, n: number, freq: number, rate: number): number {
  const coeff = 2 * Math.cos((2 * Math.PI * freq) / rate);
  let s1 = 0;
  let s2 = 0;
  for (let i = start; i < start + n; i++) {
    const s0 = pcm[i]! / 32768 + coeff * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  return (s1 * s1 + s2 * s2 - coeff * s1 * s2) / (n * n);
}

export interface DtmfDetectOptions {
  sampleRate: number;
  /** A key must be seen in this many consecutive blocks (~13 ms each at 8 kHz's 105 samples) to count. Default 3. */
  minBlocks?: number;
}

/**
 * The keys in `pcm`, in order: a key counts once per tone (it must hold for
 * `minBlocks` blocks and be followed by something else before it counts
 * again). Each block needs both tones well above the other six (twist and
 * second-strongest checks), so speech and noise rarely pass.
 */
export function detectDtmf(pcm: Int16Array, options: DtmfDetectOptions): string {
  const rate = options.sampleRate;
  const block = Math.round((105 * rate) / 8000);
  const minBlocks = options.minBlocks ?? 3;
  let out = "";
  let current = "";
  let run = 0;
  let emitted = false;
  for (let start = 0; start + block <= pcm.length; start += block) {
    const low = LOW.map((f) => goertzelPower(pcm, start, block, f, rate));
    const high = HIGH.map((f) => goertzelPower(pcm, start, block, f, rate));
    const key = keyOf(low, high);
    if (key === current && key !== "") {
      run++;
      if (run >= minBlocks && !emitted) {
        out += key;
        emitted = true;
      }
    } else {
      current = key;
      run = key ? 1 : 0;
      emitted = false;
    }
  }
  return out;
}

function keyOf(low: number[], high: number[]): string {
  const li = argmax(low);
  const hi = argmax(high);
  const lp = low[li]!;
  const hp = high[hi]!;
  // Absolute floor (about -36 dBFS per tone), twist within 8 dB, and each tone 10 dB above its group's others.
  if (lp < 1e-4 || hp < 1e-4) return "";
  if (lp / hp > 6.3 || hp / lp > 6.3) return "";
  if (low.some((p, i) => i !== li && p * 10 > lp)) return "";
  if (high.some((p, i) => i !== hi && p * 10 > hp)) return "";
  return KEYS[li]![hi]!;
}

function argmax(values: number[]): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}
