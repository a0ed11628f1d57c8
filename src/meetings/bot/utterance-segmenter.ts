import { createVad, type Vad } from "../../codecs/index.js";
import type { SpeechDetectorFactory } from "../../voice/index.js";
import { CAPTURE_RATE } from "./capture-rate.js";

/** 20 ms at 16 kHz: the VAD takes multiples of 10 ms. */
const FRAME_SAMPLES = CAPTURE_RATE / 50;

/**
 * One participant's utterance: audio from just before the VAD heard speech
 * until it heard `silenceMs` of non-speech. Audio keeps arriving while it is
 * open; whoever holds it (the speaker floor) reads it as it comes.
 */
export class Utterance {
  readonly trackId: string;
  readonly startedAt = Date.now();
  /** When it ended (server clock, ms); undefined while open. */
  endedAt: number | undefined;
  #chunks: Int16Array[] = [];
  #samples = 0;
  #ended = false;
  #reader: ((chunk: Int16Array) => void) | undefined;
  #onEnd: (() => void) | undefined;
  #lengthWaiters: { samples: number; resolve: (long: boolean) => void }[] = [];
  #endWaiters: (() => void)[] = [];

  constructor(trackId: string) {
    this.trackId = trackId;
  }

  get ended(): boolean {
    return this.#ended;
  }

  get durationMs(): number {
    return (this.#samples * 1000) / CAPTURE_RATE;
  }

  push(chunk: Int16Array): void {
    if (this.#ended) return;
    this.#samples += chunk.length;
    if (this.#reader) this.#reader(chunk);
    else this.#chunks.push(chunk);
    if (this.#lengthWaiters.length > 0) {
      for (const w of this.#lengthWaiters.filter((w) => this.#samples >= w.samples)) w.resolve(true);
      this.#lengthWaiters = this.#lengthWaiters.filter((w) => this.#samples < w.samples);
    }
  }

  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.endedAt = Date.now();
    for (const w of this.#lengthWaiters) w.resolve(false);
    this.#lengthWaiters = [];
    for (const resolve of this.#endWaiters) resolve();
    this.#endWaiters = [];
    this.#onEnd?.();
  }

  /** Resolves once the utterance has ended (speaker attribution fixes its verdict then). */
  whenEnded(): Promise<void> {
    if (this.#ended) return Promise.resolve();
    return new Promise((resolve) => this.#endWaiters.push(resolve));
  }

  /** Resolves true once the utterance holds `ms` of audio, false if it ends shorter (the echo gate's test). */
  whenLonger(ms: number): Promise<boolean> {
    const samples = Math.ceil((ms * CAPTURE_RATE) / 1000);
    if (this.#samples >= samples) return Promise.resolve(true);
    if (this.#ended) return Promise.resolve(false);
    return new Promise((resolve) => this.#lengthWaiters.push({ samples, resolve }));
  }

  /** Hands over what is buffered, then every later chunk as it arrives; `onEnd` once it ends. */
  read(reader: (chunk: Int16Array) => void, onEnd: () => void): void {
    const buffered = this.#chunks;
    this.#chunks = [];
    for (const chunk of buffered) reader(chunk);
    this.#reader = reader;
    this.#onEnd = onEnd;
    if (this.#ended) onEnd();
  }
}

export interface SegmenterOptions {
  trackId: string;
  /** Non-speech that ends an utterance, ms (multiple of 10). */
  silenceMs: number;
  /** Longest utterance before it is cut, ms (continuous speech still gets captions). */
  maxUtteranceMs: number;
  /** Audio kept from before the speech onset, ms. */
  preRollMs: number;
  /** A new utterance began. */
  onUtterance(utterance: Utterance): void;
  /** The detector (talk.input.vad). Default: the codecs' gated WebRTC VAD. */
  detector?: SpeechDetectorFactory | undefined;
}

/**
 * Cuts one track's 16 kHz audio into utterances with the codecs VAD, so each
 * caption line belongs to exactly one participant.
 */
export class UtteranceSegmenter {
  readonly #options: SegmenterOptions;
  readonly #vad: Vad;
  #rest = new Int16Array(0);
  #preRoll: Int16Array[] = [];
  #current: Utterance | undefined;
  #closed = false;

  constructor(options: SegmenterOptions) {
    this.#options = options;
    this.#vad = (options.detector ?? createVad)({ sampleRate: CAPTURE_RATE, hangoverMs: options.silenceMs });
  }

  write(pcm: Int16Array): void {
    if (this.#closed || pcm.length === 0) return;
    let samples = pcm;
    if (this.#rest.length > 0) {
      samples = new Int16Array(this.#rest.length + pcm.length);
      samples.set(this.#rest);
      samples.set(pcm, this.#rest.length);
    }
    let offset = 0;
    for (; offset + FRAME_SAMPLES <= samples.length; offset += FRAME_SAMPLES) {
      this.#frame(samples.slice(offset, offset + FRAME_SAMPLES));
    }
    this.#rest = samples.slice(offset);
  }

  #frame(frame: Int16Array): void {
    const event = this.#vad.process(frame);
    const current = this.#current;
    if (current) {
      current.push(frame);
      if (event === "speech-end" || current.durationMs >= this.#options.maxUtteranceMs) {
        current.end();
        this.#current = undefined;
      }
      return;
    }
    this.#preRoll.push(frame);
    const keep = Math.max(1, Math.ceil(this.#options.preRollMs / 20));
    while (this.#preRoll.length > keep) this.#preRoll.shift();
    if (event === "speech-start") {
      const utterance = new Utterance(this.#options.trackId);
      for (const f of this.#preRoll) utterance.push(f);
      this.#preRoll = [];
      this.#current = utterance;
      this.#options.onUtterance(utterance);
    }
  }

  /** Ends the open utterance (the track ended). Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#current?.end();
    this.#current = undefined;
    this.#vad.close();
  }
}
