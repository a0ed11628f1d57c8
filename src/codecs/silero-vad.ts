/**
 * Voice activity detection with the Silero VAD (a small recurrent network,
 * silero-model.ts), beside the gated WebRTC VAD (vad.ts) behind the same
 * `Vad` interface, so the speech gate and the meeting segmenter take either.
 *
 * The model reads windows of 512 samples at 16 kHz (256 at 8 kHz), 32 ms,
 * each prefixed with the last 64 (32) samples of the previous window as
 * context, and carries a recurrent state between windows: that state and
 * context are the stream's, the model is the process's. 32 and 48 kHz are
 * averaged down to 16 kHz first (a VAD does not need the top octave).
 *
 * A window is speech when its probability reaches `threshold`, non-speech
 * when it falls below `negativeThreshold`, and keeps the previous verdict in
 * between (Silero's own hysteresis); a window quieter than `minLevelDbfs`
 * is never speech (the echo guard attenuates residual echo by 30 dB and
 * relies on that floor, as with the WebRTC VAD). A start is declared once
 * speech outweighs non-speech over `onsetMs`; an end once `hangoverMs`
 * passes without speech, as vad.ts does.
 */
import { CodecError } from "./codec-error.js";
import { sileroModel, SILERO_STATE_SIZE, type SileroModel } from "./silero-model.js";
import type { Vad, VadEvent } from "./vad.js";

export interface SileroVadOptions {
  /** Input rate in Hz: 8000 or 16000 (the model's), 32000 or 48000 (averaged to 16000). Required. */
  sampleRate: number;
  /** Probability at which a window is speech, 0..1. Default 0.5 (Silero's). */
  threshold?: number;
  /** Probability below which a window is non-speech again. Default threshold - 0.15 (Silero's). */
  negativeThreshold?: number;
  /** Speech must dominate this long before speech-start fires, ms 0..1000. Default 64 (two windows). */
  onsetMs?: number;
  /** Non-speech must last this long before speech-end fires, ms 10..10000. Default 500. */
  hangoverMs?: number;
  /** A window counts as speech only above this level, dBFS. Default -55. */
  minLevelDbfs?: number;
}

const DEFAULTS = Object.freeze({ threshold: 0.5, onsetMs: 64, hangoverMs: 500, minLevelDbfs: -55 });
const RATES = [8000, 16000, 32000, 48000];

function checkNumber(name: string, v: unknown, min: number, max: number): number {
  if (typeof v !== "number" || !Number.isFinite(v) || v < min || v > max)
    throw new CodecError("invalid_options", `${name} must be a number ${min}..${max}, got ${String(v)}`);
  return v;
}

export function createSileroVad(options: SileroVadOptions): Vad {
  if (options === null || typeof options !== "object")
    throw new CodecError("invalid_options", "createSileroVad needs { sampleRate }");
  const rate = options.sampleRate;
  if (typeof rate !== "number" || !RATES.includes(rate))
    throw new CodecError(
      "unsupported_rate",
      `Silero VAD sampleRate must be one of ${RATES.join(", ")} Hz, got ${String(rate)}`,
    );
  const threshold = checkNumber("threshold", options.threshold ?? DEFAULTS.threshold, 0.01, 0.99);
  const negative = checkNumber(
    "negativeThreshold",
    options.negativeThreshold ?? Math.max(0.01, threshold - 0.15),
    0,
    threshold,
  );
  const onsetMs = checkNumber("onsetMs", options.onsetMs ?? DEFAULTS.onsetMs, 0, 1000);
  const hangoverMs = checkNumber("hangoverMs", options.hangoverMs ?? DEFAULTS.hangoverMs, 10, 10_000);
  const minLevelDbfs = checkNumber("minLevelDbfs", options.minLevelDbfs ?? DEFAULTS.minLevelDbfs, -120, 0);
  return new SileroVad(sileroModel(), rate, { threshold, negative, onsetMs, hangoverMs, minLevelDbfs });
}

interface Settings {
  threshold: number;
  negative: number;
  onsetMs: number;
  hangoverMs: number;
  minLevelDbfs: number;
}

class SileroVad implements Vad {
  readonly sampleRate: number;
  readonly #model: SileroModel;
  readonly #settings: Settings;
  /** The rate the model sees, and input samples averaged into one of its samples. */
  readonly #modelRate: 8000 | 16000;
  readonly #decimate: number;
  /** Samples per 10 ms at the input rate: process() takes multiples of it. */
  readonly #sub: number;
  readonly #window: number;
  readonly #context: number;
  readonly #windowMs: number;
  /** Context followed by the window being filled, in the model's scale (-1..1). */
  readonly #input: Float32Array;
  #fill = 0;
  #energy = 0;
  #partial = 0;
  #partialCount = 0;
  readonly #state = new Float32Array(SILERO_STATE_SIZE);
  #speech = false;
  #speaking = false;
  #score = 0;
  #silentMs = 0;
  #probability = 0;
  #voiced = false;
  #closed = false;

  constructor(model: SileroModel, rate: number, settings: Settings) {
    this.#model = model;
    this.#settings = settings;
    this.sampleRate = rate;
    this.#modelRate = rate === 8000 ? 8000 : 16000;
    this.#decimate = rate / this.#modelRate;
    this.#sub = rate / 100;
    this.#window = this.#modelRate === 16000 ? 512 : 256;
    this.#context = this.#modelRate === 16000 ? 64 : 32;
    this.#windowMs = (this.#window * 1000) / this.#modelRate;
    this.#input = new Float32Array(this.#context + this.#window);
  }

  get speaking(): boolean {
    return this.#speaking;
  }

  /** The last window's speech probability (the model's own output, not smoothed). */
  get probability(): number {
    return this.#probability;
  }

  /** The last window was speech (its probability over the threshold, held down to the negative one, loud enough). */
  get voiced(): boolean {
    return this.#voiced;
  }

  /** Silero tracks no noise floor: always NaN. */
  get noiseFloorDbfs(): number {
    return Number.NaN;
  }

  process(frame: Int16Array): VadEvent {
    if (this.#closed) throw new CodecError("invalid_state", "the VAD is closed");
    if (!(frame instanceof Int16Array) || frame.length === 0 || frame.length % this.#sub !== 0)
      throw new CodecError(
        "invalid_audio",
        `a VAD frame at ${this.sampleRate} Hz must be a non-empty multiple of ${this.#sub} samples (10 ms), got ${frame instanceof Int16Array ? frame.length : typeof frame}`,
      );
    let event: VadEvent | undefined;
    const input = this.#input;
    const d = this.#decimate;
    for (let i = 0; i < frame.length; i++) {
      const v = frame[i]!;
      this.#energy += v * v;
      if (d > 1) {
        this.#partial += v;
        if (++this.#partialCount < d) continue;
        input[this.#context + this.#fill++] = this.#partial / d / 32768;
        this.#partial = this.#partialCount = 0;
      } else input[this.#context + this.#fill++] = v / 32768;
      if (this.#fill === this.#window) {
        const e = this.#step();
        if (e !== undefined && event === undefined) event = e;
      }
    }
    return event ?? (this.#speaking ? "speech" : "silence");
  }

  reset(): void {
    if (this.#closed) return;
    this.#input.fill(0);
    this.#state.fill(0);
    this.#fill = this.#energy = this.#partial = this.#partialCount = 0;
    this.#speech = this.#speaking = false;
    this.#score = this.#silentMs = this.#probability = 0;
    this.#voiced = false;
  }

  /** Drops the stream's state (the shared model stays loaded). Idempotent; process() afterwards throws invalid_state. */
  close(): void {
    this.#closed = true;
  }

  /** One full window: infer, then the context for the next is this window's tail. */
  #step(): VadEvent | undefined {
    const s = this.#settings;
    const input = this.#input;
    const p = this.#model.infer(input, this.#state, this.#modelRate);
    input.copyWithin(0, input.length - this.#context);
    const samples = this.#window * this.#decimate;
    const level = 10 * Math.log10(this.#energy / samples / 32768 ** 2 + 1e-12);
    this.#fill = 0;
    this.#energy = 0;
    this.#probability = p;
    if (p >= s.threshold) this.#speech = true;
    else if (p < s.negative) this.#speech = false;
    const speech = this.#speech && level >= s.minLevelDbfs;
    this.#voiced = speech;

    const ms = this.#windowMs;
    if (!this.#speaking) {
      this.#score = speech ? this.#score + ms : Math.max(0, this.#score - ms);
      if (speech && this.#score >= s.onsetMs) {
        this.#speaking = true;
        this.#silentMs = 0;
        return "speech-start";
      }
      return undefined;
    }
    this.#silentMs = speech ? 0 : this.#silentMs + ms;
    if (this.#silentMs >= s.hangoverMs) {
      this.#speaking = false;
      this.#score = 0;
      return "speech-end";
    }
    return undefined;
  }
}
