/**
 * Test-only material for the VAD goals: real speech with a known onset, and
 * ten minutes of noise, hum and silence at telephone levels, all generated
 * here from pocketsphinx-testdata and sox (repeatable: sox -R).
 */
import { encodeMulaw, decodeMulaw } from "../mulaw.js";
import { loadSpeech, run, SPEECH_FILES, toInt16 } from "./audio-tools.js";

export interface OnsetCase {
  name: string;
  pcm: Int16Array;
  /** Where speech starts, in ms from the start of `pcm`. */
  onsetMs: number;
}

function levels(x: Int16Array, sub: number): number[] {
  const out: number[] = [];
  for (let o = 0; o + sub <= x.length; o += sub) {
    let e = 0;
    for (let i = 0; i < sub; i++) e += x[o + i]! * x[o + i]!;
    out.push(10 * Math.log10(e / sub / 32768 ** 2 + 1e-12));
  }
  return out;
}

/**
 * Where a listener hears the first word begin: the first 50 ms whose mean
 * level stands 15 dB above the recording's noise floor (its 10th-percentile
 * 10 ms level), walked back over the rising edge while the level stays 6 dB
 * above the floor.
 */
export function speechOnsetMs(x: Int16Array, rate: number): number {
  const lv = levels(x, rate / 100);
  const floor = [...lv].sort((a, b) => a - b)[Math.floor(lv.length / 10)]!;
  const power = lv.map((l) => 10 ** (l / 10));
  let i = 0;
  for (; i + 5 <= lv.length; i++) {
    const mean =
      10 * Math.log10((power[i]! + power[i + 1]! + power[i + 2]! + power[i + 3]! + power[i + 4]!) / 5);
    if (mean >= floor + 15) break;
  }
  while (i > 0 && lv[i - 1]! >= floor + 6) i--;
  return i * 10;
}

function sox(rate: number, seconds: number, synth: string[], dbfs: number): Int16Array {
  const raw = toInt16(
    run("sox", [
      "-R",
      "-n",
      "-t",
      "raw",
      "-r",
      String(rate),
      "-e",
      "signed",
      "-b",
      "16",
      "-c",
      "1",
      "-",
      "synth",
      String(seconds),
      ...synth,
    ]),
  );
  return scaleTo(raw, dbfs);
}

function scaleTo(x: Int16Array, dbfs: number): Int16Array {
  let e = 0;
  for (let i = 0; i < x.length; i++) e += x[i]! * x[i]!;
  const current = 10 * Math.log10(e / x.length / 32768 ** 2);
  const g = 10 ** ((dbfs - current) / 20);
  return Int16Array.from(x, (v) => Math.max(-32768, Math.min(32767, Math.round(v * g))));
}

function telephone(x: Int16Array): Int16Array {
  return decodeMulaw(encodeMulaw(x));
}

function concat(parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/**
 * The recording at `rate` after 1 s of pink noise at `leadDbfs`, scaled to `speechDbfs` (its mean power) if given;
 * at 8 kHz through u-law, as a phone delivers it.
 */
function caseAfterNoise(name: string, rate: 8000 | 16000, leadDbfs: number, speechDbfs?: number): OnsetCase {
  const speech = loadSpeech(name, rate);
  const pcm = concat([
    sox(rate, 1, ["pinknoise"], leadDbfs),
    speechDbfs === undefined ? speech : scaleTo(speech, speechDbfs),
  ]);
  return { name, pcm: rate === 8000 ? telephone(pcm) : pcm, onsetMs: 1000 + speechOnsetMs(speech, rate) };
}

/** Every recording at `rate`, after 1 s of pink noise at -50 dBFS; at 8 kHz also through u-law. */
export function onsetCases(rate: 8000 | 16000): OnsetCase[] {
  return SPEECH_FILES.map((name) => caseAfterNoise(name, rate, -50));
}

/** A quiet caller on a quiet line at 8 kHz: the recording scaled to `dbfs` after 1 s of pink noise at -75 dBFS. */
export function quietLineCase(name: (typeof SPEECH_FILES)[number], dbfs: number): OnsetCase {
  return caseAfterNoise(name, 8000, -75, dbfs);
}

/** Ten minutes of non-speech in eight 75 s segments, as one continuous stream (level steps included). */
export function noiseCorpus(rate: 8000 | 16000): { name: string; pcm: Int16Array }[] {
  const s = 75;
  const hum = (f: number) => [
    "sine",
    String(f),
    "sine",
    String(3 * f),
    "sine",
    String(5 * f),
    "sine",
    String(7 * f),
  ];
  const mix = (a: Int16Array, b: Int16Array) =>
    Int16Array.from(a, (v, i) => Math.max(-32768, Math.min(32767, v + b[i]!)));
  return [
    { name: "digital silence", pcm: new Int16Array(rate * s) },
    { name: "white noise -50 dBFS", pcm: sox(rate, s, ["whitenoise"], -50) },
    { name: "pink noise -45 dBFS", pcm: sox(rate, s, ["pinknoise"], -45) },
    { name: "brown noise -40 dBFS", pcm: sox(rate, s, ["brownnoise"], -40) },
    { name: "50 Hz hum with harmonics -35 dBFS", pcm: sox(rate, s, hum(50), -35) },
    {
      name: "60 Hz hum + pink noise -40 dBFS",
      pcm: mix(sox(rate, s, hum(60), -42), sox(rate, s, ["pinknoise"], -45)),
    },
    { name: "u-law line noise -48 dBFS", pcm: telephone(sox(rate, s, ["pinknoise"], -48)) },
    { name: "dither -80 dBFS", pcm: sox(rate, s, ["whitenoise"], -80) },
  ];
}

export { concat as concatPcm };
