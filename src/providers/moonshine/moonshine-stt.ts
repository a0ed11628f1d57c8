/**
 * Moonshine STT: a local recognizer built for short utterances (the English
 * tiny model, 27 M parameters, from the `@usefulsensors/moonshine-js` npm
 * package, run by onnxruntime-node on a thread of its own). Word errors on the
 * pocketsphinx-testdata recordings: 2.4% against pocketsphinx's 22-25%, the
 * same over a u-law phone line (docs/providers.md).
 *
 * Moonshine decodes whole utterances, not a stream: the stream keeps the
 * audio written and decodes the whole at finish(). Running hypotheses cost a
 * decode of everything held so far each, so they follow the stream contract
 * (SttStreamOptions.eagerPartials): a stream that decides on the words while
 * the speaker talks (a barge-in confirmed by words) gets one every
 * `partialIntervalMs` of new audio; any other stream (a turn's own words, a
 * meeting's captions) gets one at each pause inside the utterance (200 ms
 * quiet after speech), as pocketsphinx's resident decoder gives ended
 * utterances only. Over a meeting's two talkers that took the server's CPU
 * per bot from 0.16 to under 0.1 core (docs/performance.md, "Meetings"). At
 * most one running decode is in flight per stream, and finish() reuses the
 * last one when no speech came after it (the same samples, the same text).
 * Silence before and after the speech is trimmed first (Moonshine answers
 * nothing for a word inside seconds of silence), and audio longer than
 * `segmentSeconds` is cut at its quietest 10 ms and decoded in pieces.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { rms } from "../../codecs/index.js";
import {
  PCM16_16K,
  TalkError,
  type ProviderCapabilities,
  type ProviderHealth,
  type SttProvider,
  type SttResult,
  type SttStream,
  type SttStreamOptions,
} from "../../core/index.js";
import { mergeOptions } from "../support/options.js";
import { defaultMoonshineModelDir, MoonshineModel, MOONSHINE_MODEL_PACKAGE } from "./moonshine-model.js";

export interface MoonshineSttOptions {
  /** Registry id. Default "moonshine". */
  id?: string;
  /** Directory of encoder_model.onnx and decoder_model_merged.onnx. Default: the npm package's tiny model. */
  modelDir?: string;
  /**
   * Streams that ask for running hypotheses (`eagerPartials`): one every this much new audio, ms. Other
   * streams: one at each pause inside the utterance. 0: none at all (the final text only). Default 500.
   */
  partialIntervalMs?: number;
  /** Audio decoded in one piece at most, s (5-30). Default 20. */
  segmentSeconds?: number;
  /** onnxruntime intra-op threads of the model's thread. Default 1. */
  threads?: number;
}

export const MOONSHINE_STT_DEFAULTS = Object.freeze({
  id: "moonshine",
  partialIntervalMs: 500,
  segmentSeconds: 20,
  threads: 1,
});

const RATE = 16_000;
const FRAME = RATE / 100;
/** Trimming: frames within this many dB of the loudest count as the utterance... */
const TRIM_BELOW_PEAK_DB = 35;
/** ...and none under this level does (a line's hiss). */
const TRIM_FLOOR_DBFS = -65;
/** Kept either side of what the trim finds, samples (200 ms). */
const TRIM_PAD = RATE / 5;
/** Quiet after speech that is a pause: a running hypothesis for a stream that is not eager, samples (200 ms). */
const PAUSE = TRIM_PAD;
/** Shorter than this after the trim: nothing to decode, samples (100 ms). */
const MIN_SPEECH = RATE / 10;
/** The margins tried in turn while a decode of enough speech comes back empty, samples (200, 100, 300 ms). */
const RETRY_PADS = [TRIM_PAD, RATE / 10, (RATE * 3) / 10];
/** Speech from which an empty text is asked again, samples (200 ms). */
const RETRY_MIN_SPEECH = RATE / 5;

export class MoonshineSttProvider implements SttProvider {
  readonly kind = "stt" as const;
  readonly id: string;
  readonly label = "Moonshine (local)";
  readonly capabilities: ProviderCapabilities;
  readonly #modelDir: string | undefined;
  readonly #partialSamples: number;
  readonly #segmentSamples: number;
  readonly #threads: number;
  #model: MoonshineModel | undefined;

  constructor(options: MoonshineSttOptions = {}) {
    const { modelDir, ...tuning } = options;
    const o = mergeOptions<Omit<MoonshineSttOptions, "modelDir">>(MOONSHINE_STT_DEFAULTS, tuning);
    if (!Number.isInteger(o.partialIntervalMs) || o.partialIntervalMs < 0 || o.partialIntervalMs > 10_000)
      throw new TalkError(
        "config_invalid",
        "moonshine: partialIntervalMs must be an integer from 0 to 10000 ms.",
      );
    if (!(o.segmentSeconds >= 5 && o.segmentSeconds <= 30))
      throw new TalkError("config_invalid", "moonshine: segmentSeconds must be from 5 to 30.");
    if (!Number.isInteger(o.threads) || o.threads < 1 || o.threads > 16)
      throw new TalkError("config_invalid", "moonshine: threads must be an integer from 1 to 16.");
    this.id = o.id;
    this.#modelDir = modelDir ?? defaultMoonshineModelDir();
    this.#partialSamples = (o.partialIntervalMs * RATE) / 1000;
    this.#segmentSamples = Math.round(o.segmentSeconds * RATE);
    this.#threads = o.threads;
    this.capabilities = Object.freeze({
      local: true,
      streaming: o.partialIntervalMs > 0,
      inputFormats: [PCM16_16K],
    });
  }

  /** Decodes so far and the model thread's time on them (undefined before the first stream). */
  get stats(): MoonshineModel["stats"] | undefined {
    return this.#model?.stats;
  }

  /** Why the model cannot be loaded from where it is looked for (its files are missing), or undefined. */
  modelMissing(): string | undefined {
    if (!this.#modelDir)
      return `the Moonshine model is missing: the npm package ${MOONSHINE_MODEL_PACKAGE} is not installed (npm ci)`;
    if (
      !existsSync(join(this.#modelDir, "encoder_model.onnx")) ||
      !existsSync(join(this.#modelDir, "decoder_model_merged.onnx"))
    )
      return `the Moonshine model is missing: no encoder_model.onnx and decoder_model_merged.onnx in ${this.#modelDir}`;
    return undefined;
  }

  health(): Promise<ProviderHealth> {
    const missing = this.modelMissing();
    if (missing) return Promise.resolve({ ok: false, detail: missing });
    return Promise.resolve({ ok: true, detail: `model ${this.#modelDir}, ${this.#threads} thread(s)` });
  }

  startStream(options: SttStreamOptions): SttStream {
    const { format } = options;
    if (format.encoding !== "pcm16" || format.sampleRate !== RATE || format.channels !== 1) {
      throw new TalkError("invalid_audio", "Moonshine needs 16 kHz mono PCM16; resample before writing.", {
        details: { format: { ...format } },
      });
    }
    if (!this.#modelDir)
      throw new TalkError(
        "provider_unavailable",
        `The Moonshine model is missing: the npm package ${MOONSHINE_MODEL_PACKAGE} is not installed.`,
      );
    this.#model ??= new MoonshineModel(this.#modelDir, this.#threads);
    this.#model.warm();
    return new MoonshineStream(this.#model, options, this.#partialSamples, this.#segmentSamples);
  }

  /** Ends the model's thread. Idempotent; a later stream starts a new one. */
  async close(): Promise<void> {
    const model = this.#model;
    this.#model = undefined;
    await model?.close();
  }
}

export function createMoonshineStt(options: MoonshineSttOptions = {}): MoonshineSttProvider {
  return new MoonshineSttProvider(options);
}

type StreamState = "open" | "finishing" | "ended";

class MoonshineStream implements SttStream {
  readonly #model: MoonshineModel;
  readonly #signal: AbortSignal;
  readonly #onPartial: ((text: string) => void) | undefined;
  readonly #partialSamples: number;
  readonly #segmentSamples: number;
  #state: StreamState = "open";
  /** The segment being filled (grown by doubling). */
  #audio = new Int16Array(RATE * 4);
  #length = 0;
  /** Texts of the segments already cut off, in order (each a decode in flight or done). */
  readonly #segments: Promise<string>[] = [];
  #sinceDecode = 0;
  #partialInFlight: Promise<void> | undefined;
  #lastPartial = "";
  /** Running hypotheses every #partialSamples (eager) or at pauses (not). */
  readonly #eager: boolean;
  /** Cut-off segments so far: a decode's samples are named by (segment, start, end). */
  #segmentIndex = 0;
  /** The last running decode's samples and text, reused by finish() when it decodes the same samples. */
  #lastDecode: { segment: number; start: number; end: number; text: string } | undefined;
  /** Pause tracking over whole 10 ms frames: the next frame to look at, the loudest so far, the last loud one's end. */
  #scanned = 0;
  #peakEnergy = 0;
  #loudEnd = 0;
  /** Speech since the last running decode (a pause with none after it asks for nothing). */
  #speechSinceDecode = false;
  /** The latest running decode's text (all segments), in flight or done. */
  #latest: Promise<string> | undefined;
  /**
   * The text at the caller's last pause (pause()), while they have not resumed (resume()): the final text
   * when the stream finishes without voice after it, whatever noise the line added since.
   */
  #atPause: Promise<string> | undefined;
  #finish: Promise<SttResult> | undefined;
  readonly #onAbort = (): void => {
    this.#state = "ended";
  };

  constructor(
    model: MoonshineModel,
    options: SttStreamOptions,
    partialSamples: number,
    segmentSamples: number,
  ) {
    this.#model = model;
    this.#signal = options.signal;
    this.#onPartial = options.onPartial;
    this.#partialSamples = partialSamples;
    this.#segmentSamples = segmentSamples;
    this.#eager = options.eagerPartials === true;
    if (this.#signal.aborted) this.#state = "ended";
    else this.#signal.addEventListener("abort", this.#onAbort, { once: true });
  }

  write(pcm: Int16Array): void {
    if (this.#state !== "open")
      throw new TalkError("invalid_state", "The STT stream is finished or aborted.");
    if (pcm.length === 0) return;
    if (this.#length + pcm.length > this.#audio.length) {
      const grown = new Int16Array(Math.max(this.#audio.length * 2, this.#length + pcm.length));
      grown.set(this.#audio.subarray(0, this.#length));
      this.#audio = grown;
    }
    this.#audio.set(pcm, this.#length);
    this.#length += pcm.length;
    this.#sinceDecode += pcm.length;
    if (this.#length >= this.#segmentSamples) this.#cutSegment();
    if (this.#partialSamples === 0 || this.#partialInFlight) return;
    if (this.#eager ? this.#sinceDecode >= this.#partialSamples : this.#pausedAfterSpeech())
      this.#decodePartial();
  }

  /**
   * True when the audio ends in a pause after speech not yet decoded: PAUSE of frames under the loudness
   * bar speechSpan() uses (35 dB under the loudest so far, and above -65 dBFS) after one over it.
   */
  #pausedAfterSpeech(): boolean {
    for (; this.#scanned + FRAME <= this.#length; this.#scanned += FRAME) {
      const energy = frameEnergy(this.#audio, this.#scanned);
      if (energy > this.#peakEnergy) this.#peakEnergy = energy;
      if (energy >= speechBar(this.#peakEnergy)) {
        this.#loudEnd = this.#scanned + FRAME;
        this.#speechSinceDecode = true;
      }
    }
    return this.#speechSinceDecode && this.#length - this.#loudEnd >= PAUSE;
  }

  /**
   * The speaker paused, by the caller's detector: a running decode now if speech came since the last one.
   * On a noisy line this stream's own pause test (frames 35 dB under the loudest) may never fire.
   */
  pause(): void {
    if (this.#state !== "open" || this.#partialSamples === 0) return;
    if (!this.#partialInFlight) {
      this.#pausedAfterSpeech(); // brings the scan (and whether speech came since the last decode) up to date
      if (this.#speechSinceDecode) this.#decodePartial();
    }
    // A decode in flight started at this pause (this stream's own test found it first) or before it: either
    // way every word so far is in it or in the one just asked for.
    this.#atPause = this.#latest;
  }

  /** The caller's voice is back after a pause: the words at the pause are not the last ones. */
  resume(): void {
    this.#atPause = undefined;
  }

  finish(): Promise<SttResult> {
    this.#finish ??= this.#finishOnce();
    return this.#finish;
  }

  async #finishOnce(): Promise<SttResult> {
    if (this.#state === "open") this.#state = "finishing";
    try {
      this.#throwIfAborted();
      // The model's thread takes one decode at a time: waiting for a running one first costs nothing, and
      // its text is the result when no speech came after it.
      await this.#partialInFlight;
      this.#throwIfAborted();
      // No voice since the caller's pause, by the caller's own detector: the words at the pause are final
      // (a decode of the same speech with the line's noise after it can differ: "ten" became "10").
      const atPause = this.#atPause && (await this.#atPause);
      this.#throwIfAborted();
      if (atPause) return { text: atPause };
      const last = this.#decode(this.#audio.subarray(0, this.#length), true);
      const texts = await Promise.all([...this.#segments, last]);
      this.#throwIfAborted();
      return { text: joinTexts(texts) };
    } catch (err) {
      this.#throwIfAborted();
      throw err;
    } finally {
      this.#state = "ended";
      this.#signal.removeEventListener("abort", this.#onAbort);
    }
  }

  #throwIfAborted(): void {
    if (this.#signal.aborted)
      throw new TalkError("cancelled", "Speech recognition was cancelled.", { cause: this.#signal.reason });
  }

  /** Cuts the segment at its quietest 10 ms within its last 4 s and decodes it; the rest starts the next. */
  #cutSegment(): void {
    const searchFrom = Math.max(0, this.#length - RATE * 4);
    let cut = this.#length;
    let quietest = Number.POSITIVE_INFINITY;
    for (let at = searchFrom; at + FRAME <= this.#length; at += FRAME) {
      const energy = frameEnergy(this.#audio, at);
      if (energy < quietest) {
        quietest = energy;
        cut = at + FRAME / 2;
      }
    }
    this.#atPause = undefined;
    const head = this.#decode(this.#audio.slice(0, cut), true);
    head.catch(() => {}); // reported by finish()
    this.#segments.push(head);
    const rest = this.#audio.slice(cut, this.#length);
    this.#audio = new Int16Array(Math.max(RATE * 4, rest.length * 2));
    this.#audio.set(rest);
    this.#length = rest.length;
    this.#segmentIndex++;
    this.#scanned = 0;
    this.#peakEnergy = 0;
    this.#loudEnd = 0;
  }

  #decodePartial(): void {
    this.#sinceDecode = 0;
    this.#speechSinceDecode = false;
    const current = this.#decode(this.#audio.subarray(0, this.#length), false);
    const all = Promise.all([...this.#segments, current]).then(joinTexts);
    // A failed running decode gives no words at a pause: finish() decodes again.
    this.#latest = all.catch(() => "");
    this.#partialInFlight = all
      .then((text) => {
        if (this.#state === "open" && text && text !== this.#lastPartial) {
          this.#lastPartial = text;
          this.#onPartial?.(text);
        }
      })
      .catch(() => {}) // a failed running hypothesis is not the result; finish() decodes again
      .finally(() => {
        this.#partialInFlight = undefined;
      });
  }

  /**
   * The trimmed audio's text ("" for silence), from a copy the model thread takes over. Moonshine sometimes
   * ends a decode before the first word (an empty text for a clear utterance, depending on the silence
   * around it: the TIDIGITS recording gives its five digits with 100 or 300 ms either side, nothing with
   * 200), so for the text that counts (`retry`) an empty answer for at least 200 ms of speech is asked
   * again with other margins. Not for running hypotheses: asked again, the echo residue a barge-in probe
   * sometimes holds was heard as words ("So?", "Speaker.") and cut an answer a backchannel had resumed.
   */
  async #decode(pcm: Int16Array, retry: boolean): Promise<string> {
    const span = speechSpan(pcm);
    if (!span) return "";
    const segment = this.#segmentIndex;
    for (const pad of retry ? RETRY_PADS : RETRY_PADS.slice(0, 1)) {
      const start = Math.max(0, span.speechStart - pad);
      const end = Math.min(pcm.length, span.speechEnd + pad);
      // The same samples as the last running decode of this segment (the audio is only appended to): its text.
      const last = this.#lastDecode;
      if (last && last.segment === segment && last.start === start && last.end === end && last.text)
        return last.text;
      const audio = new Float32Array(end - start);
      for (let i = 0; i < audio.length; i++) audio[i] = pcm[start + i]! / 32768;
      const { text } = await this.#model.transcribe(audio);
      if (!retry) this.#lastDecode = { segment, start, end, text };
      if (text || span.speechEnd - span.speechStart < RETRY_MIN_SPEECH) return text;
    }
    return "";
  }
}

/** The quietest energy (mean square) that counts as speech: -65 dBFS. */
const FLOOR_ENERGY = 32768 * 32768 * 10 ** (TRIM_FLOOR_DBFS / 10);

/** A frame's energy that counts as the utterance, given the loudest so far: 35 dB under it, and over the floor. */
function speechBar(peakEnergy: number): number {
  return Math.max(peakEnergy * 10 ** (-TRIM_BELOW_PEAK_DB / 10), FLOOR_ENERGY);
}

/** Mean square of the 10 ms frame at `at`. */
function frameEnergy(pcm: Int16Array, at: number): number {
  return rms(pcm.subarray(at, at + FRAME)) ** 2;
}

/**
 * The part of `pcm` holding the utterance: from the first to the last 10 ms frame within 35 dB of the
 * loudest and above -65 dBFS (`speechStart`, `speechEnd`), and with 200 ms either side (`start`, `end`);
 * undefined when nothing (or under 100 ms) is there.
 */
export function speechSpan(
  pcm: Int16Array,
): { start: number; end: number; speechStart: number; speechEnd: number } | undefined {
  const frames = Math.floor(pcm.length / FRAME);
  if (frames === 0) return undefined;
  const energies = new Float64Array(frames);
  let peak = 0;
  for (let f = 0; f < frames; f++) {
    energies[f] = frameEnergy(pcm, f * FRAME);
    if (energies[f]! > peak) peak = energies[f]!;
  }
  const bar = speechBar(peak);
  if (peak < FLOOR_ENERGY) return undefined;
  let first = 0;
  while (energies[first]! < bar) first++;
  let last = frames - 1;
  while (energies[last]! < bar) last--;
  if ((last - first + 1) * FRAME < MIN_SPEECH) return undefined;
  const speechStart = first * FRAME;
  const speechEnd = (last + 1) * FRAME;
  return {
    start: Math.max(0, speechStart - TRIM_PAD),
    end: Math.min(pcm.length, speechEnd + TRIM_PAD),
    speechStart,
    speechEnd,
  };
}

function joinTexts(texts: string[]): string {
  return texts
    .map((t) => t.trim())
    .filter(Boolean)
    .join(" ");
}
