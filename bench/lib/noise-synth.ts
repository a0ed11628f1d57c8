/**
 * Reproducible background noises for the VAD and noise-suppression figures
 * (bench/vad.bench.ts): the same seed gives the same samples on every
 * machine. Pink: Paul Kellet's filter over seeded white noise. Street:
 * brown-noise traffic rumble whose level swells as cars pass (seeded
 * arrivals), over a pink bed. Babble: six espeak-ng talkers (three voices,
 * different texts and rates) at seeded offsets, summed: speech nobody is
 * addressing, the hardest case for a VAD.
 */
import { execFileSync } from "node:child_process";
import { toInt16 } from "../../src/codecs/testing/audio-tools.js";

/** mulberry32: a small seeded PRNG, 0..1. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Mean power of `x` in dBFS. */
export function levelDbfs(x: Int16Array | Float32Array): number {
  let e = 0;
  for (let i = 0; i < x.length; i++) e += x[i]! * x[i]!;
  const full = x instanceof Int16Array ? 32768 ** 2 : 1;
  return 10 * Math.log10(e / Math.max(1, x.length) / full + 1e-12);
}

/** `x` (any scale) scaled to `dbfs` mean power as PCM16. */
export function scaleTo(x: Float32Array | Int16Array, dbfs: number): Int16Array {
  const current = levelDbfs(x instanceof Int16Array ? x : Float32Array.from(x, (v) => v / 32768));
  const g = 10 ** ((dbfs - current) / 20);
  return Int16Array.from(x, (v) => Math.max(-32768, Math.min(32767, Math.round(v * g))));
}

function pinkFloat(n: number, random: () => number): Float32Array {
  const out = new Float32Array(n);
  let b0 = 0,
    b1 = 0,
    b2 = 0,
    b3 = 0,
    b4 = 0,
    b5 = 0,
    b6 = 0;
  for (let i = 0; i < n; i++) {
    const w = random() * 2 - 1;
    b0 = 0.99886 * b0 + w * 0.0555179;
    b1 = 0.99332 * b1 + w * 0.0750759;
    b2 = 0.969 * b2 + w * 0.153852;
    b3 = 0.8665 * b3 + w * 0.3104856;
    b4 = 0.55 * b4 + w * 0.5329522;
    b5 = -0.7616 * b5 - w * 0.016898;
    out[i] = b0 + b1 + b2 + b3 + b4 + b5 + b6 + w * 0.5362;
    b6 = w * 0.115926;
  }
  return out;
}

export function pinkNoise(rate: number, seconds: number, dbfs: number, seed = 1): Int16Array {
  return scaleTo(pinkFloat(Math.round(rate * seconds), seeded(seed)), dbfs);
}

export function streetNoise(rate: number, seconds: number, dbfs: number, seed = 2): Int16Array {
  const n = Math.round(rate * seconds);
  const random = seeded(seed);
  const bed = pinkFloat(n, random);
  // Brown noise (integrated white, leaky so it stays bounded): the engines' and tyres' rumble.
  const rumble = new Float32Array(n);
  let b = 0;
  for (let i = 0; i < n; i++) {
    b = 0.998 * b + (random() * 2 - 1) * 0.06;
    rumble[i] = b;
  }
  // Cars pass every 2-8 s: a Gaussian swell of 1.5-4 s, 6-15 dB over the rumble.
  const envelope = new Float32Array(n).fill(0.4);
  for (let t = random() * 3; t < seconds; t += 2 + random() * 6) {
    const width = (1.5 + random() * 2.5) / 2;
    const gain = 10 ** ((6 + random() * 9) / 20);
    const from = Math.max(0, Math.round((t - 3 * width) * rate));
    const to = Math.min(n, Math.round((t + 3 * width) * rate));
    for (let i = from; i < to; i++) envelope[i]! += gain * Math.exp(-0.5 * ((i / rate - t) / width) ** 2);
  }
  const mix = Float32Array.from(rumble, (v, i) => v * envelope[i]! + bed[i]! * 0.15);
  return scaleTo(mix, dbfs);
}

const BABBLE_TALKERS: [voice: string, speed: number, text: string][] = [
  ["en-us+m3", 165, "I told them the meeting had moved to Thursday, but nobody checked the calendar again."],
  ["en+f2", 150, "The trains were late all week, so we started leaving the house twenty minutes earlier."],
  ["en-us+f4", 175, "Could you pass me the report from last quarter, the one with the blue cover on it?"],
  ["en+m1", 155, "We should order more paper before the end of the month, the printer is nearly out."],
  ["en-us+m7", 170, "She said the restaurant on the corner closes early on Sundays and Mondays now."],
  ["en+f3", 160, "Honestly I think the second option is cheaper, but the first one will last longer."],
];

function espeak(voice: string, speed: number, text: string, rate: number): Int16Array {
  const wav = execFileSync("espeak-ng", ["-v", voice, "-s", String(speed), "--stdout", text], {
    maxBuffer: 1 << 28,
  });
  const raw = execFileSync(
    "sox",
    [
      "-R",
      "-V1",
      "-t",
      "wav",
      "-",
      ...["-t", "raw", "-e", "signed", "-b", "16", "-c", "1", "-"],
      "rate",
      String(rate),
    ],
    { input: wav, maxBuffer: 1 << 28 },
  );
  return toInt16(raw);
}

export function babbleNoise(rate: number, seconds: number, dbfs: number, seed = 3): Int16Array {
  const n = Math.round(rate * seconds);
  const random = seeded(seed);
  const mix = new Float32Array(n);
  for (const [voice, speed, text] of BABBLE_TALKERS) {
    const talker = espeak(voice, speed, text, rate);
    // Each talker repeats their line with a seeded pause, from a seeded offset.
    let at = -Math.floor(random() * talker.length);
    while (at < n) {
      for (let i = 0; i < talker.length; i++) {
        const j = at + i;
        if (j >= 0 && j < n) mix[j]! += talker[i]!;
      }
      at += talker.length + Math.round(random() * 0.4 * rate);
    }
  }
  return scaleTo(mix, dbfs);
}

export type NoiseKind = "pink" | "babble" | "street";

export function noiseOf(kind: NoiseKind, rate: number, seconds: number, dbfs: number): Int16Array {
  if (kind === "pink") return pinkNoise(rate, seconds, dbfs);
  if (kind === "street") return streetNoise(rate, seconds, dbfs);
  return babbleNoise(rate, seconds, dbfs);
}

/** `speech` plus `noise` (looped) at `snrDb` below the speech's mean power. */
export function mixAtSnr(speech: Int16Array, noise: Int16Array, snrDb: number): Int16Array {
  const target = levelDbfs(speech) - snrDb;
  const g = 10 ** ((target - levelDbfs(noise)) / 20);
  return Int16Array.from(speech, (v, i) =>
    Math.max(-32768, Math.min(32767, Math.round(v + noise[i % noise.length]! * g))),
  );
}
