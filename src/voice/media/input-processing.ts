/**
 * The input chain's choices that are not echo cancellation (echo-guard.ts):
 * which voice activity detector the leg's speech gate runs, and noise
 * suppression of the caller's audio before the gate and STT.
 *
 * Core names no DSP or model: the composition root injects the detector
 * (talk.input.vad: the gated WebRTC VAD, the default, or the Silero VAD) and
 * the suppressor (talk.input.noiseSuppression, libspeexdsp's preprocessor)
 * from the codecs layer. One suppressor per leg, created when the leg starts
 * and closed with it.
 */
import type { Vad } from "../../codecs/index.js";
import { TalkError } from "../../core/index.js";

/** What a speech gate asks of its detector (vad.ts / silero-vad.ts options). */
export interface SpeechDetectorOptions {
  sampleRate: number;
  /** Speech needed before speech-start, ms. Default: the detector's. */
  onsetMs?: number;
  /** Non-speech that ends speech, ms. */
  hangoverMs: number;
  /** Quieter than this is never speech, dBFS. Default: the detector's. */
  minLevelDbfs?: number;
}

/** Creates one stream's detector (per leg). */
export type SpeechDetectorFactory = (options: SpeechDetectorOptions) => Vad;

/** One suppressor's state (per leg). */
export interface NoiseSuppressorPort {
  /** Returns the whole frames completed so far, denoised. */
  process(pcm: Int16Array): Int16Array;
  /** Frees the state. Idempotent. */
  close(): void;
}

export type NoiseSuppressorFactory = (options: {
  sampleRate: number;
  suppressDb: number;
}) => NoiseSuppressorPort;

/** talk.input.noiseSuppression. */
export interface NoiseSuppressionOptions {
  /** Suppress noise on every media leg's caller audio before the speech gate and STT. Default false. */
  enabled?: boolean;
  /** Most attenuation applied to noise, dB, -90..-1. Default -30. */
  suppressDb?: number;
}

export type ResolvedNoiseSuppression = Readonly<Required<NoiseSuppressionOptions>>;

/** Validates talk.input.noiseSuppression (config_invalid naming the key); defaults filled in. */
export function resolveNoiseSuppression(
  options: NoiseSuppressionOptions = {},
  key = "talk.input.noiseSuppression",
): ResolvedNoiseSuppression {
  const { enabled = false, suppressDb = -30 } = options;
  if (typeof enabled !== "boolean")
    throw new TalkError("config_invalid", `${key}.enabled must be true or false.`);
  if (typeof suppressDb !== "number" || !Number.isInteger(suppressDb) || suppressDb < -90 || suppressDb > -1)
    throw new TalkError(
      "config_invalid",
      `${key}.suppressDb must be an integer from -90 to -1, got ${String(suppressDb)}.`,
    );
  return Object.freeze({ enabled, suppressDb });
}

/** The media legs' input chain as the controller factory hands it over. */
export interface FactoryInput {
  /** The speech gate's detector; none: the codecs' gated WebRTC VAD. */
  readonly vad?: SpeechDetectorFactory | undefined;
  readonly noiseSuppression: ResolvedNoiseSuppression;
  /** The suppressor; none: no suppression even when enabled (the composition root warned). */
  readonly createSuppressor?: NoiseSuppressorFactory | undefined;
}

/** The leg's suppressor, at the leg's rate. */
export class NoiseGuard {
  readonly #suppressor: NoiseSuppressorPort;
  #closed = false;

  constructor(create: NoiseSuppressorFactory, options: ResolvedNoiseSuppression, sampleRate: number) {
    this.#suppressor = create({ sampleRate, suppressDb: options.suppressDb });
  }

  /** The denoised whole frames so far (a partial frame waits); empty once closed. */
  process(pcm: Int16Array): Int16Array {
    if (this.#closed) return new Int16Array(0);
    return this.#suppressor.process(pcm);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#suppressor.close();
  }
}
