import { cancelledError, expectPcm, pcmChunk } from "../../core/index.js";
import { TalkError, toTalkError } from "../../core/index.js";
import type { TalkLogger } from "../../core/index.js";
import type { TtsProvider } from "../../core/index.js";
import type { TalkSession } from "../../core/index.js";
import type { OutputAudioPayload } from "../../core/index.js";
import type { AudioFormat } from "../../core/index.js";
import { durationMs, sameAudioFormat } from "../../core/index.js";
import type { TalkAudioSink } from "./controller-types.js";
import { PcmConverter } from "./pcm-converter.js";

/** TTS parameters of one segment (session voice, or a reply's voice directive). */
export interface SpeechSettings {
  voice?: string;
  speed: number;
  /** Settings to retry with when the TTS refuses these (e.g. a directive named a voice it lacks). */
  fallback?: { voice?: string; speed: number };
}

export interface TtsQueueContext {
  session: TalkSession;
  tts: TtsProvider;
  outputFormat: AudioFormat;
  /** Read on every write: the sink can be replaced mid-answer (talk.session.join). */
  sink(): TalkAudioSink | undefined;
  turnId: string;
  /** The output item (already begun with session.beginOutput) every segment belongs to. */
  itemId: string;
  /** What this TTS job renders (the agent consult that wrote the text): `parentId` of its output.audio.* events. */
  parentId?: string;
  /** Segments synthesized ahead of the one playing. */
  prefetch: number;
  logger: TalkLogger;
  /** Called as the first segment's synthesis starts; the timer it returns is cleared at its first audio (the holding line). */
  firstAudioLate?: () => NodeJS.Timeout | undefined;
}

/** Extra fields of output.audio.delta from a queue: which segment (chunk) of the answer the audio belongs to. */
export interface SegmentAudioPayload extends OutputAudioPayload {
  segment: number;
  /** On the first delta of each segment: the text being spoken, so captions can follow the audio. */
  segmentText?: string;
}

interface Segment {
  readonly index: number;
  readonly text: string;
  readonly settings: SpeechSettings;
  started: boolean;
  done: boolean;
  error: unknown;
  /** Some of its audio reached the sink (segmentText goes on the first delta only). */
  audible: boolean;
  /** Synthesized samples in the output format, not yet written. */
  readonly audio: Int16Array[];
}

/**
 * An ordered TTS queue for one answer: segments (chunks of the answer) are
 * pushed as soon as they are complete; each is synthesized as "tts" work while
 * the one before it plays (up to `prefetch` ahead), and their audio goes to the
 * sink strictly in push order, as one output item. Playing runs as
 * output-scoped "output-stream" work, so cancelOutput / cancelTurn / close
 * abort it: synthesis is aborted (the TTS process ends), audio already
 * synthesized but not played is dropped, and nothing reaches the sink after
 * the abort (the check sits right before each write).
 */
export class TtsQueue {
  readonly #ctx: TtsQueueContext;
  readonly #segments: Segment[] = [];
  #playing = 0;
  #ended = false;
  #wake: (() => void) | undefined;
  #started = false;
  #bytes = 0;
  #signal: AbortSignal | undefined;
  /** Everything written for the item, in order: a held answer resumes from it. */
  readonly #written: Int16Array[] = [];
  /** Held (hold()): audio is kept, not sent; `#resumeAt` is the byte position heard when it was held. */
  #held = false;
  #resumeAt = 0;
  /** Bumped by hold() and resume(): a drain that resolved across one does not end the answer. */
  #generation = 0;

  constructor(ctx: TtsQueueContext) {
    if (!Number.isInteger(ctx.prefetch) || ctx.prefetch < 0)
      throw new TalkError("config_invalid", "TtsQueue prefetch must be an integer >= 0.");
    this.#ctx = ctx;
  }

  /** Segments pushed so far. */
  get length(): number {
    return this.#segments.length;
  }

  /** True once any audio of this answer reached the sink. */
  get audible(): boolean {
    return this.#started;
  }

  /** Queues text to be spoken after everything pushed before it. Ignored after end(). */
  push(text: string, settings: SpeechSettings): void {
    if (this.#ended || text.trim() === "") return;
    this.#segments.push({
      index: this.#segments.length,
      text,
      settings,
      started: false,
      done: false,
      error: undefined,
      audible: false,
      audio: [],
    });
    this.#startDue();
    this.#notify();
  }

  /** No more segments: play() resolves once the last one has played. */
  end(): void {
    this.#ended = true;
    this.#notify();
  }

  /**
   * Plays the segments in order until end(); resolves with the bytes written.
   * Emits output.audio.started (first audio), .delta (per write) and .done.
   * Rejects `cancelled` when the output or turn is cancelled, or the first
   * synthesis error (the caller fails the turn).
   */
  play(): Promise<number> {
    const { session, turnId } = this.#ctx;
    return session.runWork("output-stream", (signal) => this.#play(signal), { turnId, scope: "output" });
  }

  async #play(signal: AbortSignal): Promise<number> {
    this.#signal = signal;
    const onAbort = (): void => this.#notify();
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      this.#startDue();
      for (;;) {
        if (signal.aborted) throw cancelledError(signal);
        const segment = this.#segments[this.#playing];
        if (!segment) {
          if (this.#ended) break;
          await this.#changed();
          continue;
        }
        while (segment.audio.length > 0) this.#write(segment, segment.audio.shift()!, signal);
        if (segment.error !== undefined) throw segment.error;
        if (segment.done) {
          this.#playing++;
          this.#startDue();
          continue;
        }
        await this.#changed();
      }
      const { outputFormat, turnId, itemId } = this.#ctx;
      const parent = this.#parent();
      // Done means heard: a phone line plays for seconds after synthesis, and the answer stays interruptible.
      // A hold clears the line (the drain resolves): the answer ends only once it played out unheld.
      for (;;) {
        const generation = this.#generation;
        if (!this.#held) await this.#ctx.sink()?.drained?.(itemId, signal);
        if (signal.aborted) throw cancelledError(signal);
        if (this.#held) await this.#changed();
        else if (generation === this.#generation) break;
      }
      const done: OutputAudioPayload = {
        format: { ...outputFormat },
        bytes: this.#bytes,
        durationMs: durationMs(outputFormat, this.#bytes),
      };
      if (this.#started)
        this.#ctx.session.emit({
          type: "output.audio.done",
          turnId,
          itemId,
          ...parent,
          final: true,
          payload: done,
        });
      return this.#bytes;
    } finally {
      signal.removeEventListener("abort", onAbort);
      // Whatever was synthesized but not played is drained, never spoken later.
      for (const s of this.#segments) s.audio.length = 0;
    }
  }

  #write(segment: Segment, pcm: Int16Array, signal: AbortSignal): void {
    // Checked right before the write: cancellation is synchronous, so nothing reaches the sink after it.
    if (signal.aborted || pcm.length === 0) return;
    const { outputFormat, turnId, itemId } = this.#ctx;
    const s = this.#ctx.session;
    if (!this.#started) {
      this.#started = true;
      s.emit({
        type: "output.audio.started",
        turnId,
        itemId,
        ...this.#parent(),
        payload: { format: { ...outputFormat } },
      });
    }
    const first = !segment.audible;
    segment.audible = true;
    this.#bytes += pcm.byteLength;
    this.#written.push(pcm);
    if (!this.#held) this.#ctx.sink()?.write(pcmChunk(pcm, outputFormat), { turnId, itemId });
    const payload: SegmentAudioPayload = {
      format: { ...outputFormat },
      bytes: pcm.byteLength,
      durationMs: durationMs(outputFormat, pcm.byteLength),
      segment: segment.index,
      ...(first ? { segmentText: segment.text } : {}),
    };
    s.emit({ type: "output.audio.delta", turnId, itemId, ...this.#parent(), payload });
  }

  /** True while held (hold() until resume() or the output ends). */
  get held(): boolean {
    return this.#held;
  }

  /**
   * Caller speech over the answer, not yet known to interrupt it: the line is
   * cleared where the listener is (the sink's heardMs), the rest is kept and
   * audio still being synthesized is kept too; `output.audio.paused`. False
   * when already held, over, or the sink cannot say what was heard (nothing
   * to resume from: the caller interrupts as before).
   */
  hold(): boolean {
    const sink = this.#ctx.sink();
    const signal = this.#signal;
    if (this.#held || !signal || signal.aborted || (this.#started && !sink?.heardMs)) return false;
    const { outputFormat, turnId, itemId } = this.#ctx;
    const heardMs = this.#started ? sink!.heardMs!(itemId) : 0;
    if (heardMs === undefined) return false;
    const frame = 2 * outputFormat.channels;
    const at = Math.round((heardMs * outputFormat.sampleRate * frame) / 1000);
    this.#resumeAt = Math.min(this.#bytes, at - (at % frame));
    this.#held = true;
    this.#generation++;
    if (this.#started) sink?.clear({ turnId, itemId, reason: "barge_in" });
    this.#ctx.session.emit({
      type: "output.audio.paused",
      turnId,
      itemId,
      ...this.#parent(),
      payload: { reason: "barge_in", heardMs: durationMs(outputFormat, this.#resumeAt) },
    });
    this.#notify();
    return true;
  }

  /**
   * The held answer plays on from where it was heard (`output.audio.resumed`):
   * the speech was a backchannel or had no words. False when not held.
   */
  resume(reason: "backchannel" | "no_words"): boolean {
    const signal = this.#signal;
    if (!this.#held || !signal || signal.aborted) return false;
    this.#held = false;
    this.#generation++;
    const { outputFormat, turnId, itemId } = this.#ctx;
    const rest = concatFrom(this.#written, this.#resumeAt / 2);
    if (rest.byteLength > 0) this.#ctx.sink()?.write(pcmChunk(rest, outputFormat), { turnId, itemId });
    this.#ctx.session.emit({
      type: "output.audio.resumed",
      turnId,
      itemId,
      ...this.#parent(),
      payload: { reason, fromMs: durationMs(outputFormat, this.#resumeAt) },
    });
    this.#notify();
    return true;
  }

  #parent(): { parentId?: string } {
    return this.#ctx.parentId !== undefined ? { parentId: this.#ctx.parentId } : {};
  }

  /** Starts synthesis of the playing segment and up to `prefetch` after it. */
  #startDue(): void {
    if (this.#signal === undefined) return; // not playing yet: play() starts them
    const last = Math.min(this.#segments.length - 1, this.#playing + this.#ctx.prefetch);
    for (let i = this.#playing; i <= last; i++) {
      const segment = this.#segments[i]!;
      if (segment.started) continue;
      segment.started = true;
      this.#synthesize(segment).then(
        () => {
          segment.done = true;
          this.#notify();
        },
        (err: unknown) => {
          segment.error = err;
          this.#notify();
        },
      );
    }
  }

  #synthesize(segment: Segment): Promise<void> {
    const { turnId } = this.#ctx;
    return this.#ctx.session.runWork(
      "tts",
      async (signal) => {
        try {
          await this.#synthesizeWith(segment, segment.settings, signal);
        } catch (err) {
          const error = toTalkError(err);
          const fallback = segment.settings.fallback;
          // A voice directive naming a voice this TTS lacks must not silence the answer: retry with the session's voice.
          if (error.code !== "invalid_params" || !fallback || segment.audio.length > 0 || signal.aborted)
            throw err;
          this.#ctx.logger.warn(
            { sessionId: this.#ctx.session.id, voice: segment.settings.voice, code: error.code },
            "TTS refused the directive's settings; using the session voice",
          );
          await this.#synthesizeWith(segment, fallback, signal);
        }
      },
      { turnId, scope: "output" },
    );
  }

  async #synthesizeWith(
    segment: Segment,
    settings: { voice?: string; speed: number },
    signal: AbortSignal,
  ): Promise<void> {
    const { tts, outputFormat } = this.#ctx;
    let converter: PcmConverter | undefined;
    let late = segment.index === 0 ? this.#ctx.firstAudioLate?.() : undefined;
    const add = (pcm: Int16Array): void => {
      if (pcm.length === 0 || signal.aborted) return;
      clearTimeout(late);
      late = undefined;
      segment.audio.push(pcm);
      this.#notify();
    };
    try {
      const request = {
        text: segment.text,
        speed: settings.speed,
        format: outputFormat,
        signal,
        ...(settings.voice !== undefined ? { voice: settings.voice } : {}),
      };
      for await (const chunk of tts.synthesize(request)) {
        if (signal.aborted) break;
        // Spoken audio is resampled here: a TTS that answers encoded bytes is refused, never read as samples.
        const pcm = expectPcm(chunk, "A spoken answer");
        if (!converter || !sameAudioFormat(converter.from, pcm.format)) {
          if (converter) add(converter.flush());
          converter?.close();
          converter = new PcmConverter(pcm.format, outputFormat);
        }
        add(converter.convert(pcm.samples));
      }
      if (signal.aborted) throw cancelledError(signal);
      if (converter) add(converter.flush());
    } finally {
      clearTimeout(late);
      converter?.close();
    }
  }

  #changed(): Promise<void> {
    return new Promise((resolve) => (this.#wake = resolve));
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}

/** The samples of `chunks` (in order) from sample `from` on, as one array. */
function concatFrom(chunks: readonly Int16Array[], from: number): Int16Array {
  let total = 0;
  for (const c of chunks) total += c.length;
  const out = new Int16Array(Math.max(0, total - from));
  let at = 0;
  for (const c of chunks) {
    const skip = Math.max(0, Math.min(c.length, from - at));
    if (skip < c.length) out.set(c.subarray(skip), Math.max(0, at - from));
    at += c.length;
  }
  return out;
}
