/**
 * The echo canceller's reference on a Talk API client's leg: what the server
 * sent the client to play, aligned by what the client says it played. A
 * client sends no played-audio reference of its own (its microphone may
 * hear its speaker: a laptop, a phone on speaker), but it reports its
 * playback position (`playback` {itemId, playedMs} on appendAudio and the
 * cancel verbs). So the leg keeps the phone line's mirror (LineReference):
 * the assistant audio sent, converted to the leg's PCM and cut into 20 ms
 * frames, each item's first frame at a known position; a report becomes the
 * mirror's acknowledgement (that item's start plus its played frames), and
 * each caller frame takes the same span of audio from the mirror. A client
 * reports the position at the end of the frame it sends, so the frame's span
 * starts that frame's length earlier: that is the position acknowledged.
 *
 * Until the client reports a position nothing is known of its playback and
 * no reference is offered (`reporting` false): the leg hears the caller as
 * it did before clients reported.
 */
import { pcm16FromBytes } from "../../codecs/index.js";
import type { AudioChunk, AudioFormat } from "../../core/index.js";
import { PcmConverter } from "../pipelines/pcm-converter.js";
import { LineReference } from "./line-reference.js";

/** Items whose first frame's position is kept (older reports are ignored). */
const MAX_ITEMS = 64;
const FRAME_MS = 20;
/**
 * Frames kept while the client has reported nothing (10 s): its first report is of the answer it plays
 * now; a client that never reports must not hold minutes of audio per session.
 */
const UNREPORTED_FRAMES = 500;

export class ClientReference {
  readonly #format: AudioFormat;
  readonly #frameSamples: number;
  readonly #mirror = new LineReference(pcm16FromBytes, 2);
  /** Per item: the mirror's position of its first frame. */
  readonly #starts = new Map<string, number>();
  #converter: PcmConverter | undefined;
  #converterFrom: AudioFormat | undefined;
  /** The item being cut into frames, and the samples of it not yet a whole frame. */
  #itemId: string | undefined;
  #partial: Int16Array = new Int16Array(0);
  /** The last position the client reported, applied with the next caller frame. */
  #pending: { itemId: string; playedMs: number } | undefined;
  #reporting = false;

  /** `format`: the leg's caller PCM (the reference's format). */
  constructor(format: AudioFormat) {
    this.#format = { encoding: "pcm16", sampleRate: format.sampleRate, channels: 1 };
    this.#frameSamples = (format.sampleRate * FRAME_MS) / 1000;
  }

  /** True once the client reported a position of audio sent to it. */
  get reporting(): boolean {
    return this.#reporting;
  }

  /** Frames sent and not yet taken (tests). */
  get queuedFrames(): number {
    return this.#mirror.queuedFrames;
  }

  /** Assistant audio of `itemId` went to the client. Encoded audio (no PCM) is not mirrored. */
  written(chunk: AudioChunk, itemId: string): void {
    if (chunk.kind !== "pcm") return;
    if (itemId !== this.#itemId) this.#startItem(itemId);
    const pcm = this.#convert(chunk.format, chunk.samples);
    let joined = pcm;
    if (this.#partial.length > 0) {
      joined = new Int16Array(this.#partial.length + pcm.length);
      joined.set(this.#partial);
      joined.set(pcm, this.#partial.length);
    }
    let at = 0;
    for (; at + this.#frameSamples <= joined.length; at += this.#frameSamples)
      this.#sent(joined.slice(at, at + this.#frameSamples));
    this.#partial = joined.slice(at);
    const { position } = this.#mirror;
    if (!this.#reporting && this.#mirror.queuedFrames > UNREPORTED_FRAMES)
      this.#mirror.acknowledged(position - UNREPORTED_FRAMES);
  }

  /** The client reports it played `playedMs` of `itemId` (an item never sent is ignored). */
  reported(position: { itemId: string; playedMs: number }): void {
    if (!this.#starts.has(position.itemId)) return;
    this.#reporting = true;
    this.#pending = position;
  }

  /**
   * What the client played while capturing the next `samples` of caller audio (silence where nothing
   * was sent): the last report, moved back by this frame's length, acknowledges the mirror first.
   */
  take(samples: number): Int16Array {
    const pending = this.#pending;
    if (pending) {
      this.#pending = undefined;
      const frameMs = (samples / this.#format.sampleRate) * 1000;
      const start = this.#starts.get(pending.itemId);
      if (start !== undefined)
        this.#mirror.acknowledged(start + Math.max(0, Math.floor((pending.playedMs - frameMs) / FRAME_MS)));
    }
    return this.#mirror.take(samples);
  }

  /** The client stops what it holds (the output was cancelled): nothing sent is left to play. */
  clear(): void {
    this.#partial = new Int16Array(0);
    this.#itemId = undefined;
    this.#mirror.clear();
  }

  close(): void {
    this.#converter?.close();
    this.#converter = undefined;
  }

  /** A new item starts on a whole frame: the last one's remainder goes out padded with silence. */
  #startItem(itemId: string): void {
    if (this.#partial.length > 0) {
      const padded = new Int16Array(this.#frameSamples);
      padded.set(this.#partial);
      this.#sent(padded);
      this.#partial = new Int16Array(0);
    }
    this.#itemId = itemId;
    this.#starts.set(itemId, this.#mirror.position);
    if (this.#starts.size > MAX_ITEMS) this.#starts.delete(this.#starts.keys().next().value as string);
  }

  #sent(frame: Int16Array): void {
    this.#mirror.sent(new Uint8Array(frame.buffer, frame.byteOffset, frame.byteLength));
  }

  #convert(from: AudioFormat, pcm: Int16Array): Int16Array {
    if (from.sampleRate === this.#format.sampleRate && from.channels === 1) return pcm;
    const same =
      this.#converterFrom?.sampleRate === from.sampleRate && this.#converterFrom.channels === from.channels;
    if (!same) {
      this.#converter?.close();
      this.#converter = new PcmConverter(from, this.#format);
      this.#converterFrom = from;
    }
    return this.#converter!.convert(pcm);
  }
}
