/**
 * Test-only helpers: run the real reference tools (ffmpeg, sox) and load the
 * real recordings from Debian's pocketsphinx-testdata. Not exported from the
 * layer's index.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const SPEECH_DIR = "/usr/share/pocketsphinx/test/data";

/** 16 kHz mono recordings shipped by pocketsphinx-testdata (raw files are headerless s16le). */
export const SPEECH_FILES = [
  "goforward.raw",
  "numbers.raw",
  "something.raw",
  "tidigits/dhd.2934z.raw",
  "cards/001.wav",
  "cards/002.wav",
  "cards/003.wav",
  "cards/004.wav",
  "cards/005.wav",
  "librivox/sense_and_sensibility_01_austen_64kb-0870.wav",
  "librivox/sense_and_sensibility_01_austen_64kb-0880.wav",
] as const;

export function run(cmd: string, args: readonly string[], input?: Uint8Array): Buffer {
  return execFileSync(cmd, args, { input, maxBuffer: 1 << 30, stdio: ["pipe", "pipe", "pipe"] });
}

export function toInt16(buf: Buffer): Int16Array {
  const copy = new Uint8Array(buf.byteLength);
  copy.set(buf);
  return new Int16Array(copy.buffer, 0, copy.byteLength >> 1);
}

export function bytesOf(pcm: Int16Array): Uint8Array {
  return new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength);
}

/** A real 16 kHz speech recording as PCM16 at `rate` (converted by sox -v when rate differs). */
export function loadSpeech(name: string, rate = 16000): Int16Array {
  const path = join(SPEECH_DIR, name);
  if (!existsSync(path)) throw new Error(`missing ${path}: install pocketsphinx-testdata`);
  const input = name.endsWith(".raw")
    ? ["-t", "raw", "-r", "16000", "-e", "signed", "-b", "16", "-c", "1", path]
    : [path];
  // -R: sox's dither is seeded, so the same recording converts to the same samples every run.
  return toInt16(
    run("sox", [
      "-R",
      "-V1",
      ...input,
      "-t",
      "raw",
      "-e",
      "signed",
      "-b",
      "16",
      "-c",
      "1",
      "-",
      "rate",
      "-v",
      String(rate),
    ]),
  );
}

/** sox's very-high-quality resampler, the reference for our resampler. */
export function soxResample(pcm: Int16Array, from: number, to: number, channels = 1): Int16Array {
  const fmt = (r: number) => [
    "-t",
    "raw",
    "-e",
    "signed",
    "-b",
    "16",
    "-c",
    String(channels),
    "-r",
    String(r),
  ];
  return toInt16(run("sox", ["-V1", ...fmt(from), "-", ...fmt(to), "-", "rate", "-v"], bytesOf(pcm)));
}

export function withTempDir<T>(fn: (dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), "talkgate-codecs-"));
  try {
    return fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function writeTemp(dir: string, name: string, data: Uint8Array): string {
  const path = join(dir, name);
  writeFileSync(path, data);
  return path;
}

export function readBytes(path: string): Uint8Array {
  return new Uint8Array(readFileSync(path));
}
