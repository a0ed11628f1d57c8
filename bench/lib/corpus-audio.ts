/**
 * The sound sources of the turn-taking corpus, all 8 kHz mono PCM as
 * Float64Array (16-bit scale): Debian's pocketsphinx-testdata recordings,
 * espeak-ng speech (rendered once and kept in a temp dir, keyed by the text,
 * voice and the espeak-ng version), and seeded noise (pink, babble, street,
 * line hiss). Everything here is a pure function of its arguments and the
 * seed, so the corpus is the same on every run and machine with the same
 * packages.
 */
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const RATE = 8000;
const DATA = "/usr/share/pocketsphinx/test/data";

/** Real speech from pocketsphinx-testdata: the caller's interruptions (and the babble's talkers). */
export const RECORDINGS = [
  `${DATA}/goforward.raw`,
  `${DATA}/numbers.raw`,
  `${DATA}/something.raw`,
  ...[1, 2, 3, 4, 5].map((n) => `${DATA}/cards/00${n}.wav`),
  ...["0870", "0880", "0890", "0920", "0930"].map(
    (n) => `${DATA}/librivox/sense_and_sensibility_01_austen_64kb-${n}.wav`,
  ),
] as const;

/** A seeded generator (mulberry32): uniform in [0, 1). */
export type Rng = () => number;

export function rng(...seeds: (number | string)[]): Rng {
  const h = createHash("sha256").update(seeds.join("/")).digest();
  let a = h.readUInt32LE(0);
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 0x1_0000_0000;
  };
}

/** A standard normal draw (Box-Muller). */
function gauss(r: Rng): number {
  return Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
}

const recordings = new Map<string, Float64Array>();

/** A recording as 8 kHz PCM (raw files are 16 kHz s16le), converted by ffmpeg once per process. */
export function recording(path: string): Float64Array {
  let pcm = recordings.get(path);
  if (!pcm) {
    const input = path.endsWith(".raw") ? ["-f", "s16le", "-ar", "16000", "-ac", "1"] : [];
    pcm = toFloat(
      execFileSync("ffmpeg", [
        "-v",
        "error",
        ...input,
        "-i",
        path,
        "-ac",
        "1",
        "-ar",
        "8000",
        "-f",
        "s16le",
        "pipe:1",
      ]),
    );
    recordings.set(path, pcm);
  }
  return pcm;
}

let espeakVersion: string | undefined;

/** Where rendered espeak-ng audio is kept between runs. */
export function espeakCacheDir(): string {
  espeakVersion ??= execFileSync("espeak-ng", ["--version"], { encoding: "utf8" }).trim();
  const dir = join(tmpdir(), "talkgate-turn-corpus", hash(espeakVersion).slice(0, 12));
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** espeak-ng speech as 8 kHz PCM, rendered once per text / voice / speed / pitch and kept in espeakCacheDir(). */
export function espeak(text: string, voice = "en-us", speed = 175, pitch = 50): Float64Array {
  const file = join(
    espeakCacheDir(),
    `${hash(JSON.stringify([text, voice, speed, pitch])).slice(0, 24)}.s16`,
  );
  if (existsSync(file)) return toFloat(readFileSync(file));
  const wav = execFileSync("espeak-ng", [
    "-v",
    voice,
    "-s",
    String(speed),
    "-p",
    String(pitch),
    "--stdout",
    text,
  ]);
  const pcm = execFileSync(
    "ffmpeg",
    ["-v", "error", "-i", "pipe:0", "-ac", "1", "-ar", "8000", "-f", "s16le", "pipe:1"],
    {
      input: wav,
    },
  );
  // Written whole then renamed: a concurrent run never reads half a file.
  writeFileSync(`${file}.${process.pid}`, pcm);
  renameSync(`${file}.${process.pid}`, file);
  return toFloat(pcm);
}

function hash(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

function toFloat(s16: Buffer): Float64Array {
  const out = new Float64Array(s16.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = s16.readInt16LE(i * 2);
  return out;
}

/** Power of 10 ms frames, dB re full scale (a full-scale square wave is 0). */
function frameDb(pcm: Float64Array): number[] {
  const out: number[] = [];
  for (let at = 0; at + 80 <= pcm.length; at += 80) {
    let sum = 0;
    for (let i = at; i < at + 80; i++) sum += pcm[i]! * pcm[i]!;
    out.push(10 * Math.log10(sum / 80 / 32768 ** 2 + 1e-12));
  }
  return out;
}

/** Frames within this of the loudest count as speech (trimming, active level). */
const ACTIVE_BELOW_PEAK_DB = 35;

/** The speech without its leading and trailing silence: the first and last sample are the onset and end. */
export function trim(pcm: Float64Array): Float64Array {
  const db = frameDb(pcm);
  const floor = Math.max(...db) - ACTIVE_BELOW_PEAK_DB;
  const first = db.findIndex((d) => d > floor);
  const last = db.findLastIndex((d) => d > floor);
  return pcm.slice(first * 80, (last + 1) * 80);
}

/** RMS level of the frames that hold speech (within 35 dB of the loudest), dBFS. */
export function activeLevelDb(pcm: Float64Array): number {
  const db = frameDb(pcm);
  const floor = Math.max(...db) - ACTIVE_BELOW_PEAK_DB;
  const active = db.filter((d) => d > floor);
  const mean = active.reduce((s, d) => s + 10 ** (d / 10), 0) / Math.max(1, active.length);
  return 10 * Math.log10(mean + 1e-12);
}

/** RMS level of the whole signal, dBFS. */
export function levelDb(pcm: Float64Array): number {
  let sum = 0;
  for (const s of pcm) sum += s * s;
  return 10 * Math.log10(sum / Math.max(1, pcm.length) / 32768 ** 2 + 1e-12);
}

/** `pcm` scaled so that `measure` reads `targetDb`. */
export function atLevel(pcm: Float64Array, targetDb: number, measure = levelDb): Float64Array {
  const gain = 10 ** ((targetDb - measure(pcm)) / 20);
  return pcm.map((s) => s * gain);
}

/** Pink noise (Paul Kellet's economy filter on white), `n` samples at `db` dBFS RMS. */
export function pinkNoise(r: Rng, n: number, db: number): Float64Array {
  const out = new Float64Array(n);
  let b0 = 0;
  let b1 = 0;
  let b2 = 0;
  for (let i = 0; i < n; i++) {
    const w = gauss(r);
    b0 = 0.99765 * b0 + w * 0.099046;
    b1 = 0.963 * b1 + w * 0.2965164;
    b2 = 0.57 * b2 + w * 1.0526913;
    out[i] = b0 + b1 + b2 + w * 0.1848;
  }
  return atLevel(out, db);
}

/** Babble: `talkers` recordings from random points, looped and summed (a cafeteria), at `db` dBFS RMS. */
export function babbleNoise(r: Rng, n: number, db: number, talkers = 6): Float64Array {
  const out = new Float64Array(n);
  for (let t = 0; t < talkers; t++) {
    const voice = atLevel(
      trim(recording(RECORDINGS[Math.floor(r() * RECORDINGS.length)]!)),
      -26,
      activeLevelDb,
    );
    let at = Math.floor(r() * voice.length);
    for (let i = 0; i < n; i++, at++) out[i] = out[i]! + voice[at % voice.length]!;
  }
  return atLevel(out, db);
}

/**
 * Street-like noise: a low traffic rumble (leaky-integrated white), a pink
 * bed, vehicles passing every few seconds (a 2 s swell of the rumble) and now
 * and then a horn (two detuned square-ish tones for 0.4 s), at `db` dBFS RMS.
 */
export function streetNoise(r: Rng, n: number, db: number): Float64Array {
  const out = pinkNoise(r, n, -40);
  let brown = 0;
  const rumble = new Float64Array(n);
  for (let i = 0; i < n; i++) rumble[i] = brown = 0.995 * brown + gauss(r);
  const rumbleAt = atLevel(rumble, -34);
  for (let at = Math.floor(r() * 3 * RATE); at < n; at += Math.floor((3 + 3 * r()) * RATE)) {
    const len = 2 * RATE;
    for (let i = 0; i < len && at + i < n; i++) {
      const swell = Math.exp(-(((i - len / 2) / (len / 5)) ** 2));
      rumbleAt[at + i] = rumbleAt[at + i]! * (1 + 3 * swell);
    }
  }
  for (let i = 0; i < n; i++) out[i] = out[i]! + rumbleAt[i]!;
  for (let at = Math.floor((2 + 6 * r()) * RATE); at < n; at += Math.floor((6 + 6 * r()) * RATE)) {
    const f = 380 + 80 * r();
    for (let i = 0; i < 0.4 * RATE && at + i < n; i++) {
      const ph = (2 * Math.PI * i) / RATE;
      const tone = Math.sign(Math.sin(f * ph)) * 0.6 + Math.sign(Math.sin(f * 1.26 * ph)) * 0.4;
      out[at + i] = out[at + i]! + 1200 * tone;
    }
  }
  return atLevel(out, db);
}

/** A line's hiss: white noise at `db` dBFS. */
export function lineHiss(r: Rng, n: number, db: number): Float64Array {
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = gauss(r);
  return atLevel(out, db);
}

export type NoiseKind = "pink" | "babble" | "street";

export function noise(kind: NoiseKind, r: Rng, n: number, db: number): Float64Array {
  if (kind === "pink") return pinkNoise(r, n, db);
  if (kind === "babble") return babbleNoise(r, n, db);
  return streetNoise(r, n, db);
}
