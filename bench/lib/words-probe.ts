/**
 * The words probe (issue 40): while the echo guard holds the canceller's output as the answer's echo, a
 * recognizer transcribes a short sliding window of that output, and where the words it hears are not
 * found in the answer's own text the held frames pass as the caller talking over it. Level, coherence
 * and VAD tests all read a misadapted filter's echo (a drifting reference) as speech; what they lack is
 * the words: residual echo recognised gives (something like) words of the answer, a caller other words.
 *
 * Measured on issue 40's grid and not kept in the leg (docs/performance.md): a bench option
 * (bench/onset-latency.bench.ts --words), fed by the echo guard's WordsProbePort.
 *
 * Decodes run on the recognizer's own thread: the probe asks for one and goes on; its verdict counts
 * from the frame it arrives at (with `latencyMs`, from `latencyMs` after the frame it was asked at: an
 * offline bench decodes at once and models the wait).
 */
import { createResampler } from "../../src/codecs/index.js";

/** What one decode gave (bench output, the notebook's examples). */
export interface WordsDecode {
  /** The probe's frame count when the window ended. */
  frame: number;
  text: string;
  /** Edit distance of the words to the closest stretch of the answer's text, per letter of the words. */
  distance: number;
  verdict: "caller" | "answer" | "none";
}

export interface WordsProbeOptions {
  /** Of the frames fed (20 ms each). */
  sampleRate: number;
  /** Transcribes 16 kHz mono audio in -1..1 (the probe gives up the array). */
  transcribe(audio: Float32Array): Promise<string>;
  /** The text of the answer now playing (undefined: none known, no verdict). */
  answerText(): string | undefined;
  /** Sliding window decoded, ms. Default 1000. */
  windowMs?: number;
  /** At most one decode per this many ms. Default 200. */
  stepMs?: number;
  /** Held frames within the window before a decode is asked for, ms. Default 100. */
  minHeldMs?: number;
  /** A caller verdict lets held frames through for this long, ms. Default 400. */
  hangMs?: number;
  /**
   * Above this distance (edit distance per letter) the words are not the answer's. Default 0.6 (issue 40's
   * grid without drift: over 0.5 one echo window in ten, over 0.65 a quarter of the callers).
   */
  maxDistance?: number;
  /** Fewer letters than this decide nothing. Default 6. */
  minLetters?: number;
  /** A caller verdict lets a held frame through only where the reference explains under this much of it. Default 1 (any). */
  maxExplained?: number;
  /** A verdict counts from this long after the frame it was asked at (offline), ms. Default 0. */
  latencyMs?: number;
  /** Each decode, as it counts (bench output). */
  onDecode?(decode: WordsDecode): void;
}

const FRAME_MS = 20;

export class WordsProbe {
  readonly #o: Required<Omit<WordsProbeOptions, "onDecode">> & Pick<WordsProbeOptions, "onDecode">;
  readonly #windowFrames: number;
  /** The window: output frames (copies) and whether each was held, oldest first. */
  readonly #frames: Int16Array[] = [];
  readonly #held: boolean[] = [];
  #count = 0;
  #lastAsked = Number.NEGATIVE_INFINITY;
  #inFlight: Promise<void> | undefined;
  /** Decoded verdicts waiting for their frame. */
  readonly #arrived: { at: number; decode: WordsDecode }[] = [];
  #callerUntil = 0;
  /** Decodes asked for (CPU accounting). */
  decodes = 0;

  constructor(options: WordsProbeOptions) {
    this.#o = {
      windowMs: 1000,
      stepMs: 200,
      minHeldMs: 100,
      hangMs: 400,
      maxDistance: 0.6,
      minLetters: 6,
      latencyMs: 0,
      maxExplained: 1,
      ...options,
    };
    this.#windowFrames = Math.round(this.#o.windowMs / FRAME_MS);
  }

  frame(pcm: Int16Array, held: boolean, explained = 0): boolean {
    this.#count++;
    this.#frames.push(Int16Array.from(pcm));
    this.#held.push(held);
    if (this.#frames.length > this.#windowFrames) {
      this.#frames.shift();
      this.#held.shift();
    }
    while (this.#arrived.length > 0 && this.#arrived[0]!.at <= this.#count)
      this.#apply(this.#arrived.shift()!.decode);
    if (held && !this.#inFlight && this.#count - this.#lastAsked >= this.#o.stepMs / FRAME_MS) {
      const heldFrames = this.#held.reduce((n, h) => n + (h ? 1 : 0), 0);
      if (heldFrames * FRAME_MS >= this.#o.minHeldMs) this.#ask();
    }
    return (
      this.#count <= this.#callerUntil && (this.#o.maxExplained >= 1 || explained < this.#o.maxExplained)
    );
  }

  idle(): void {
    this.#frames.length = 0;
    this.#held.length = 0;
    this.#callerUntil = 0;
  }

  /** Resolves once the decode in flight (if any) has come back (an offline bench's clock waits on it). */
  async settle(): Promise<void> {
    await this.#inFlight;
  }

  #ask(): void {
    const text = this.#o.answerText();
    if (text === undefined) return;
    this.#lastAsked = this.#count;
    this.decodes++;
    const asked = this.#count;
    const audio = upsample(this.#frames, this.#o.sampleRate);
    this.#inFlight = this.#o
      .transcribe(audio)
      .then(
        (words) => {
          const decode = judge(words, text, asked, this.#o.maxDistance, this.#o.minLetters);
          const at = asked + Math.ceil(this.#o.latencyMs / FRAME_MS);
          if (at <= this.#count) this.#apply(decode);
          else this.#arrived.push({ at, decode });
        },
        () => undefined, // a failed decode decides nothing
      )
      .finally(() => {
        this.#inFlight = undefined;
      });
  }

  #apply(decode: WordsDecode): void {
    this.#o.onDecode?.(decode);
    if (decode.verdict === "caller") this.#callerUntil = this.#count + this.#o.hangMs / FRAME_MS;
    else if (decode.verdict === "answer") this.#callerUntil = 0;
  }
}

/** The window as the recognizer takes it: 16 kHz, -1..1. */
function upsample(frames: readonly Int16Array[], sampleRate: number): Float32Array {
  const pcm = new Int16Array(frames.reduce((n, f) => n + f.length, 0));
  let at = 0;
  for (const f of frames) {
    pcm.set(f, at);
    at += f.length;
  }
  const resampler = createResampler({ from: sampleRate, to: 16_000 });
  try {
    const a = resampler.process(pcm);
    const b = resampler.flush();
    const out = new Float32Array(a.length + b.length);
    for (let i = 0; i < a.length; i++) out[i] = a[i]! / 32768;
    for (let i = 0; i < b.length; i++) out[a.length + i] = b[i]! / 32768;
    return out;
  } finally {
    resampler.close();
  }
}

const DIGITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"];

/** Lower-case letters and single spaces, digits spelled out. */
export function normalizeWords(text: string): string {
  return text
    .toLowerCase()
    .replace(/[0-9]/g, (d) => ` ${DIGITS[Number(d)]} `)
    .replace(/[^a-z]+/g, " ")
    .trim();
}

/** The edit distance of `words` to the closest stretch of `text` (both normalized), per letter of `words`. */
export function distanceToText(words: string, text: string): number {
  const a = words;
  const b = text;
  if (a.length === 0) return 0;
  // Semi-global alignment: a stretch of b may start and end anywhere for free.
  let prev = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    const row = new Array<number>(b.length + 1);
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min(prev[j - 1]! + cost, prev[j]! + 1, row[j - 1]! + 1);
    }
    prev = row;
  }
  return Math.min(...prev) / a.length;
}

function judge(
  words: string,
  answer: string,
  frame: number,
  maxDistance: number,
  minLetters: number,
): WordsDecode {
  const heard = normalizeWords(words);
  const letters = heard.replace(/ /g, "").length;
  if (letters < minLetters) return { frame, text: words, distance: 0, verdict: "none" };
  const distance = distanceToText(heard, normalizeWords(answer));
  return { frame, text: words, distance, verdict: distance > maxDistance ? "caller" : "answer" };
}
