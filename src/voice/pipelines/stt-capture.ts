import { createVad, type Vad } from "../../codecs/index.js";
import { TalkError, isTalkError } from "../../core/index.js";
import type { TalkLogger } from "../../core/index.js";
import type { SttProvider, SttResult, SttStream } from "../../core/index.js";
import type { TalkSession } from "../../core/index.js";
import type { AudioFormat } from "../../core/index.js";
import type { InputAudioEvents } from "./input-audio-events.js";
import { PcmConverter } from "./pcm-converter.js";

/** Rates the codecs VAD models. */
const VAD_RATES = new Set([8000, 16_000, 32_000, 48_000]);

/** What a capture needs from its pipeline: narrow, no back-reference to the controller. */
export interface SttCaptureContext {
  session: TalkSession;
  stt: SttProvider;
  /** Format of the samples passed to write(). */
  inputFormat: AudioFormat;
  language: string | undefined;
  /** 0 disables end-of-speech detection. */
  silenceTimeoutMs: number;
  logger: TalkLogger;
  /** The recognizer's running text changed (already filtered for this turn). */
  onPartial?(turnId: string, text: string): void;
  /** Ask the provider for running hypotheses inside an utterance (SttStreamOptions.eagerPartials). */
  eagerPartials?: boolean;
  /** Speech was followed by silenceTimeoutMs of non-speech (audio time). */
  onEndOfSpeech?(turnId: string): void;
  /** The STT work failed for a reason other than cancellation. */
  onError(turnId: string, error: TalkError): void;
  /** Where the audio written to the recognizer is reported (input.audio.appended). Default: not reported. */
  inputEvents?: InputAudioEvents;
}

/**
 * One turn's speech-to-text: the STT stream registered as the turn's "stt"
 * work (so cancelling the turn aborts it), the input converted to the
 * provider's format, and an optional VAD that notices the end of speech.
 */
export class SttCapture {
  readonly turnId: string;
  readonly #ctx: SttCaptureContext;
  readonly #signal: AbortSignal;
  readonly #converter: PcmConverter;
  readonly #result: Promise<SttResult>;
  readonly #vad: Vad | undefined;
  #vadRest: Int16Array = new Int16Array(0);
  #stream: SttStream | undefined;
  #releaseFinish!: () => void;
  #finishing = false;
  #closed = false;
  #inputBytes = 0;
  #endOfSpeechReported = false;

  constructor(ctx: SttCaptureContext, turn: { id: string; signal: AbortSignal }) {
    this.#ctx = ctx;
    this.turnId = turn.id;
    this.#signal = turn.signal;
    const sttFormat = ctx.stt.capabilities.inputFormats?.[0] ?? ctx.inputFormat;
    this.#converter = new PcmConverter(ctx.inputFormat, sttFormat);
    this.#vad = this.#createVad(sttFormat);
    const finishRequested = new Promise<void>((resolve) => (this.#releaseFinish = resolve));
    this.#result = ctx.session.runWork(
      "stt",
      async (signal) => {
        // runWork calls this synchronously, so the stream exists before the first write.
        const stream = ctx.stt.startStream({
          format: sttFormat,
          signal,
          ...(ctx.language !== undefined ? { language: ctx.language } : {}),
          ...(ctx.eagerPartials ? { eagerPartials: true } : {}),
          onPartial: (text) => {
            if (!signal.aborted) ctx.onPartial?.(this.turnId, text);
          },
        });
        this.#stream = stream;
        // An abort ends the wait too, so the work settles promptly (finish() then rejects `cancelled`).
        const release = (): void => this.#releaseFinish();
        signal.addEventListener("abort", release, { once: true });
        try {
          await finishRequested;
        } finally {
          signal.removeEventListener("abort", release);
        }
        return stream.finish();
      },
      { turnId: turn.id },
    );
    this.#result.catch((err: unknown) => {
      this.close();
      if (this.#signal.aborted || (isTalkError(err) && err.code === "cancelled")) return;
      ctx.onError(
        this.turnId,
        isTalkError(err)
          ? err
          : new TalkError("provider_error", "Speech recognition failed.", { cause: err }),
      );
    });
  }

  /** Bytes of input received so far. */
  get inputBytes(): number {
    return this.#inputBytes;
  }

  /** Input samples in the pipeline's input format. Dropped once the turn is cancelled or the STT failed. */
  write(input: Int16Array): void {
    if (this.#finishing) throw new TalkError("invalid_state", "The turn's capture has ended.");
    if (this.#closed || this.#signal.aborted || !this.#stream) return;
    this.#inputBytes += input.byteLength;
    this.#ctx.inputEvents?.appended(input.byteLength);
    const pcm = this.#converter.convert(input);
    if (pcm.length > 0) this.#write(pcm);
  }

  /** The caller paused (the leg's gate heard no voice for a while): the recognizer may give its words now. */
  pause(): void {
    if (this.#finishing || this.#closed || this.#signal.aborted) return;
    this.#stream?.pause?.();
  }

  /** The caller's voice is back after a pause. */
  resume(): void {
    if (this.#finishing || this.#closed || this.#signal.aborted) return;
    this.#stream?.resume?.();
  }

  /** Reports the input not reported yet (input.audio.appended), e.g. before the turn's audio is committed. */
  reportInput(): void {
    this.#ctx.inputEvents?.flush();
  }

  /** Ends the input and resolves with the final transcript (rejects `cancelled` when the turn was cancelled). */
  finish(): Promise<SttResult> {
    if (!this.#finishing) {
      this.#finishing = true;
      this.reportInput();
      if (!this.#closed && this.#stream && !this.#signal.aborted) {
        const tail = this.#converter.flush();
        if (tail.length > 0) this.#write(tail);
      }
      this.#releaseFinish();
    }
    return this.#result.finally(() => this.close());
  }

  /** Frees the converter and VAD. Idempotent; the STT stream itself ends with the turn's signal or finish(). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.reportInput();
    this.#converter.close();
    this.#vad?.close();
  }

  #write(pcm: Int16Array): void {
    try {
      this.#stream?.write(pcm);
    } catch (err) {
      // The stream ended under us (aborted or failed); finish() reports the outcome.
      this.#ctx.logger.debug({ err, turnId: this.turnId }, "stt write after the stream ended");
      return;
    }
    this.#detectEndOfSpeech(pcm);
  }

  #createVad(format: AudioFormat): Vad | undefined {
    if (this.#ctx.silenceTimeoutMs === 0 || format.channels !== 1 || !VAD_RATES.has(format.sampleRate))
      return undefined;
    return createVad({ sampleRate: format.sampleRate, hangoverMs: this.#ctx.silenceTimeoutMs });
  }

  /** Feeds the VAD whole 10 ms frames; reports the first speech-end of the turn. */
  #detectEndOfSpeech(pcm: Int16Array): void {
    const vad = this.#vad;
    if (!vad || this.#endOfSpeechReported) return;
    const frame = vad.sampleRate / 100;
    let samples = pcm;
    if (this.#vadRest.length > 0) {
      samples = new Int16Array(this.#vadRest.length + pcm.length);
      samples.set(this.#vadRest);
      samples.set(pcm, this.#vadRest.length);
    }
    const whole = samples.length - (samples.length % frame);
    this.#vadRest = samples.slice(whole);
    if (whole === 0) return;
    for (let i = 0; i < whole; i += frame) {
      if (vad.process(samples.subarray(i, i + frame)) === "speech-end") {
        this.#endOfSpeechReported = true;
        this.#ctx.onEndOfSpeech?.(this.turnId);
        return;
      }
    }
  }
}

/** Turns a recognizer's running text into transcript.delta payload text. */
export class PartialTracker {
  #last = "";

  /** The text to emit as a delta, and whether it replaces what was sent so far. */
  next(running: string): { text: string; replace: boolean } | undefined {
    if (running === this.#last) return undefined;
    const previous = this.#last;
    this.#last = running;
    if (running.startsWith(previous)) return { text: running.slice(previous.length), replace: false };
    return { text: running, replace: true };
  }
}
