/**
 * Local voice activity for a media leg whose turns are not the provider's:
 * the codecs VAD (WebRTC VAD plus an energy gate over a tracked noise floor)
 * on the caller's audio (8, 16, 32 or 48 kHz mono).
 * Speech must clear `threshold` (dBFS) for `minSpeechMs` before it counts,
 * so silence, line noise or a click never starts a turn or interrupts the
 * assistant; `silenceMs` of non-speech ends it. A short pre-roll is kept so
 * the turn's audio starts before the onset was confirmed. The detector is
 * injectable (talk.input.vad: the Silero VAD instead of the default).
 */
import { createVad, type Vad } from "../../codecs/index.js";
import type { SpeechDetectorFactory } from "./input-processing.js";

export interface SpeechGateOptions {
  /** dBFS a 10 ms frame must exceed to count as speech. */
  threshold: number;
  /** Speech needed before speech-start, ms (multiple of 10). */
  minSpeechMs: number;
  /** Non-speech that ends speech, ms (multiple of 10). */
  silenceMs: number;
  /** Audio kept from before the onset, ms. Default 300. */
  preRollMs?: number;
  /** Sample rate of the audio, Hz. Default 8000 (a phone line). */
  sampleRate?: number;
  /** The detector. Default: the codecs' gated WebRTC VAD. */
  detector?: SpeechDetectorFactory;
}

export type SpeechGateEvent = "speech-start" | "speech-end" | undefined;

export class SpeechGate {
  readonly sampleRate: number;
  readonly #vad: Vad;
  readonly #preRollFrames: number;
  /** Samples in 10 ms, the VAD's step. */
  readonly #step: number;
  #preRoll: Int16Array[] = [];

  constructor(options: SpeechGateOptions) {
    const sampleRate = options.sampleRate ?? 8000;
    this.sampleRate = sampleRate;
    this.#step = sampleRate / 100;
    this.#vad = (options.detector ?? createVad)({
      sampleRate,
      onsetMs: options.minSpeechMs,
      hangoverMs: options.silenceMs,
      minLevelDbfs: options.threshold,
    });
    this.#preRollFrames = Math.ceil((options.preRollMs ?? 300) / 20);
  }

  get speaking(): boolean {
    return this.#vad.speaking;
  }

  /**
   * The detector hears voice now, confirmed as speech or not: the last frame held speech by its own
   * per-frame rule, the one that restarts its hangover inside a segment. So voice counts alike whether the
   * gate is still in its hangover (the fixed endpoint) or has ended speech and the endpoint counts the
   * silence (the adaptive one): the adaptive endpoint cuts no pause the fixed one would have kept.
   */
  get voiced(): boolean {
    return this.#vad.voiced;
  }

  /** Feeds 20 ms or any multiple of 10 ms; returns a transition, if any. */
  process(pcm: Int16Array): SpeechGateEvent {
    let event: SpeechGateEvent;
    const whole = pcm.length - (pcm.length % this.#step);
    if (whole > 0) {
      const e = this.#vad.process(whole === pcm.length ? pcm : pcm.subarray(0, whole));
      if (e === "speech-start" || e === "speech-end") event = e;
    }
    if (!this.#vad.speaking || event === "speech-start") {
      this.#preRoll.push(pcm);
      if (this.#preRoll.length > this.#preRollFrames) this.#preRoll.shift();
    }
    return event;
  }

  /** The audio from just before the onset up to now (including the frame that confirmed it). */
  takePreRoll(): Int16Array[] {
    const out = this.#preRoll;
    this.#preRoll = [];
    return out;
  }

  close(): void {
    this.#vad.close();
  }
}
