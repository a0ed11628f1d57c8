/**
 * Local voice activity for a media leg whose turns are not the provider's:
 * the codecs VAD (WebRTC VAD plus an energy gate over a tracked noise floor)
 * on the caller's audio (mono). The detectors model 8, 16, 32 and 48 kHz; at
 * another rate (a Talk API client at 24 kHz, a realtime provider's own) they
 * hear a 16 kHz copy from the codecs' resampler, while the pre-roll keeps the
 * caller's own audio.
 * Speech must clear `threshold` (dBFS) for `minSpeechMs` before it counts,
 * so silence, line noise or a click never starts a turn or interrupts the
 * assistant; `silenceMs` of non-speech ends it. A short pre-roll is kept so
 * the turn's audio starts before the onset was confirmed. The detector is
 * injectable (talk.input.vad: the Silero VAD instead of the default).
 */
import { createResampler, createVad, type Resampler, type Vad } from "../../codecs/index.js";
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
  /** Sample rate of the audio, Hz: any the codecs' resampler takes. Default 8000 (a phone line). */
  sampleRate?: number;
  /** The detector. Default: the codecs' gated WebRTC VAD. */
  detector?: SpeechDetectorFactory;
}

export type SpeechGateEvent = "speech-start" | "speech-end" | undefined;

/** The rates both detectors (WebRTC VAD, Silero) take as they are. */
const DETECTOR_RATES: readonly number[] = [8000, 16_000, 32_000, 48_000];
/** What the detector hears at any other rate. */
const COPY_RATE = 16_000;

export class SpeechGate {
  readonly sampleRate: number;
  readonly #vad: Vad;
  readonly #preRollFrames: number;
  /** Samples in 10 ms at the detector's rate, its step. */
  readonly #step: number;
  #preRoll: Int16Array[] = [];
  /** At a rate no detector takes: the 16 kHz copy's resampler, and its samples short of a whole step. */
  readonly #copy: Resampler | undefined;
  #carry: Int16Array = new Int16Array(0);

  constructor(options: SpeechGateOptions) {
    const sampleRate = options.sampleRate ?? 8000;
    this.sampleRate = sampleRate;
    const detectorRate = DETECTOR_RATES.includes(sampleRate) ? sampleRate : COPY_RATE;
    this.#step = detectorRate / 100;
    this.#copy =
      detectorRate === sampleRate ? undefined : createResampler({ from: sampleRate, to: detectorRate });
    this.#vad = (options.detector ?? createVad)({
      sampleRate: detectorRate,
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
    const heard = this.#copy ? this.#copyOf(pcm) : pcm;
    const whole = heard.length - (heard.length % this.#step);
    if (whole > 0) {
      const e = this.#vad.process(whole === heard.length ? heard : heard.subarray(0, whole));
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
    this.#copy?.close();
  }

  /**
   * The detector's copy of `pcm`, whole steps only: the resampler returns what became ready (not always
   * a whole 10 ms), so the rest waits for the next frame instead of being dropped.
   */
  #copyOf(pcm: Int16Array): Int16Array {
    const out = this.#copy!.process(pcm);
    const all = this.#carry.length === 0 ? out : concat(this.#carry, out);
    const whole = all.length - (all.length % this.#step);
    this.#carry = all.slice(whole);
    return all.subarray(0, whole);
  }
}

function concat(a: Int16Array, b: Int16Array): Int16Array {
  const out = new Int16Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
