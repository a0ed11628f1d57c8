/**
 * Local voice activity for stt-tts calls: the codecs VAD (WebRTC VAD plus an
 * energy gate over a tracked noise floor) on the caller's 8 kHz audio.
 * Speech must clear `threshold` (dBFS) for `minSpeechMs` before it counts,
 * so silence, line noise or a click never starts a turn or interrupts the
 * assistant; `silenceMs` of non-speech ends it. A short pre-roll is kept so
 * the turn's audio starts before the onset was confirmed.
 */
import { createVad, type Vad } from "../codecs/vad.js";

export interface SpeechGateOptions {
  /** dBFS a 10 ms frame must exceed to count as speech. */
  threshold: number;
  /** Speech needed before speech-start, ms (multiple of 10). */
  minSpeechMs: number;
  /** Non-speech that ends speech, ms (multiple of 10). */
  silenceMs: number;
  /** Audio kept from before the onset, ms. Default 300. */
  preRollMs?: number;
}

export type SpeechGateEvent = "speech-start" | "speech-end" | undefined;

const RATE = 8000;

export class SpeechGate {
  readonly #vad: Vad;
  readonly #preRollFrames: number;
  #preRoll: Int16Array[] = [];

  constructor(options: SpeechGateOptions) {
    this.#vad = createVad({
      sampleRate: RATE,
      onsetMs: options.minSpeechMs,
      hangoverMs: options.silenceMs,
      minLevelDbfs: options.threshold,
    });
    this.#preRollFrames = Math.ceil((options.preRollMs ?? 300) / 20);
  }

  get speaking(): boolean {
    return this.#vad.speaking;
  }

  /** Feeds 20 ms (160 samples) or any multiple of 10 ms; returns a transition, if any. */
  process(pcm: Int16Array): SpeechGateEvent {
    let event: SpeechGateEvent;
    const whole = pcm.length - (pcm.length % (RATE / 100));
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
