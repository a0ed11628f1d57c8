/**
 * The phone line as a TalkAudioSink: assistant audio becomes 20 ms u-law
 * media frames in bursts, each followed by a mark (an acknowledgement
 * request); the marks the carrier echoes tell what the caller heard
 * (PlaybackTracker), which is when an answer is `drained`
 * (output.audio.done) and where a cancelled answer is truncated (`heardMs`).
 * `clear` empties the carrier's buffer at once. The wire format is the
 * line's: it is built by the carrier's stream codec.
 *
 * Backpressure: bursts are sent only while the socket's send buffer is under
 * the high-water mark; the rest waits in the framer (bounded) and is pumped
 * again when the buffer drains. A carrier with a bounded playback buffer
 * (`maxUnplayedMs`, Vonage's ~61 s) is also paced by its acknowledgements:
 * audio sent and not yet acknowledged stays under the bound, the rest is sent
 * as marks come back, so a long answer never overflows the carrier's buffer.
 */
import { TalkError, ULAW_8K } from "../../core/index.js";
import type { AudioChunk } from "../../core/index.js";
import { LineReference, type TalkAudioSink } from "../../voice/index.js";
import type { TerminalReason } from "../../core/index.js";
import { lineAudio, type LineAudio } from "../line-audio.js";
import { OutboundFramer } from "./outbound-framer.js";
import { PlaybackTracker } from "./playback-tracker.js";

/** Where the playout sends: the current stream socket (replaced when the carrier reconnects), in the carrier's wire format. */
export interface PlayoutLine {
  /** Sends one frame of assistant audio (the line's format). */
  media(audio: Uint8Array): void;
  /** Asks the carrier to echo `name` once the audio sent before it has played. */
  mark(name: string): void;
  /** Drops the audio the carrier buffered. */
  clear(): void;
  /** Plays DTMF with the carrier's own stream message; absent when the carrier has none. */
  dtmf?: ((digits: string) => void) | undefined;
  /**
   * Writes to the socket now what `send` may still hold back (a line batches a tick's messages into one
   * write). `clear` is flushed at once: the rest of a barge-in (events, cancelling the provider) must not
   * delay it.
   */
  flush?(): void;
  /** Bytes queued in the socket and not yet written. */
  readonly bufferedAmount: number;
}

export interface CallPlayoutOptions {
  /** The line's audio format. Default u-law 8 kHz. */
  line?: LineAudio;
  /** Pause sending while the socket buffers more than this, bytes. Default 262 144. */
  sendHighWaterBytes?: number;
  /** Re-check interval while paused by backpressure, ms. Default 20. */
  drainPollMs?: number;
  /** Frames (20 ms) a burst needs before it gets its own mark, unless it ends the item. Default 5 (100 ms). */
  minFramesPerMark?: number;
  /** Frames one media message may carry (a carrier that plays media of any length). Default 1. */
  maxFramesPerMessage?: number;
  /**
   * Audio sent and not yet acknowledged played at most, ms: sending pauses
   * there until marks come back. Default unbounded (the carrier buffers all).
   */
  maxUnplayedMs?: number;
  /** Called right after `clear` was sent (barge-in latency metric). */
  onClearSent?: () => void;
  /** Called when the first media frame of an item was sent (first-audio latency metric). */
  onItemFirstFrame?: (itemId: string) => void;
}

interface DrainWaiter {
  itemId: string;
  resolve: () => void;
}

export class CallPlayout implements TalkAudioSink {
  readonly #framer: OutboundFramer;
  readonly #audio: LineAudio;
  readonly #tracker = new PlaybackTracker();
  readonly #highWater: number;
  readonly #pollMs: number;
  readonly #onClearSent: (() => void) | undefined;
  readonly #onItemFirstFrame: ((itemId: string) => void) | undefined;
  /** Item of the last media frame sent (first-frame detection). */
  #lastItemSent: string | undefined;
  /** Marks in flight that end an item: name -> itemId. */
  readonly #endMarks = new Map<string, string>();
  /** Items whose end-of-item mark was echoed. */
  readonly #heardToEnd = new Set<string>();
  #waiters: DrainWaiter[] = [];
  #idleWaiters: Array<() => void> = [];
  #line: PlayoutLine | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  readonly #maxUnplayedMs: number | undefined;
  /** Audio sent on the line, ms, and the part of it acknowledged played (pacing by maxUnplayedMs). */
  #sentMs = 0;
  #playedMs = 0;
  /** Marks in flight: name -> the line reference's position when the mark was sent. */
  readonly #markFrames = new Map<string, number>();
  /** Marks in flight: name -> #sentMs when the mark was sent (pacing). */
  readonly #markAt = new Map<string, number>();
  /** Media went out since the last clear: a clear with nothing sent since has nothing to drop at the carrier. */
  #sentSinceClear = false;
  /** Frames sent (metrics, tests). */
  framesSent = 0;
  /** What the carrier plays, for the echo canceller: take() it in step with the caller's frames. */
  readonly reference: LineReference;

  constructor(options: CallPlayoutOptions = {}) {
    this.#highWater = options.sendHighWaterBytes ?? 262_144;
    this.#pollMs = options.drainPollMs ?? 20;
    if (!Number.isInteger(this.#highWater) || this.#highWater < 1024) {
      throw new TalkError("config_invalid", "sendHighWaterBytes must be an integer >= 1024");
    }
    // A mark at least every 100 ms of audio (every burst of 5+ frames, and at each item's end): providers that
    // stream 20 ms deltas would otherwise get a mark, and an echo, per frame.
    this.#audio = options.line ?? lineAudio(ULAW_8K);
    const maxUnplayedMs = options.maxUnplayedMs;
    if (maxUnplayedMs !== undefined && (!Number.isInteger(maxUnplayedMs) || maxUnplayedMs < 1000))
      throw new TalkError("config_invalid", "maxUnplayedMs must be an integer >= 1000");
    this.#maxUnplayedMs = maxUnplayedMs;
    this.#framer = new OutboundFramer({
      minFramesPerMark: options.minFramesPerMark ?? 5,
      maxFramesPerMessage: options.maxFramesPerMessage ?? 1,
      frameBytes: this.#audio.frameBytes,
      bytesPerMs: this.#audio.bytesPerMs,
      silenceByte: this.#audio.silenceByte,
      // Two minutes of the line's audio, whatever its byte rate.
      maxQueuedBytes: 120_000 * this.#audio.bytesPerMs,
    });
    const bytesPerSample = this.#audio.bytesPerMs / (this.#audio.pcmFormat.sampleRate / 1000);
    this.reference = new LineReference((bytes) => this.#audio.toPcm(bytes), bytesPerSample);
    this.#onClearSent = options.onClearSent;
    this.#onItemFirstFrame = options.onItemFirstFrame;
  }

  /** Sends to `line` from now on (the stream started or the carrier reconnected); undefined pauses sending. */
  attach(line: PlayoutLine | undefined): void {
    this.#line = line;
    // A new socket starts with an empty carrier buffer: the old one's marks will never come back.
    this.#resetPacing();
    this.reference.clear();
    this.#markFrames.clear();
    if (line) this.#pump();
  }

  /** The line can play DTMF with the carrier's own message (else tones go in-band as audio). */
  get sendsDigits(): boolean {
    return this.#line?.dtmf !== undefined;
  }

  /** Sends DTMF with the carrier's own message now (after whenIdle: behind the audio already sent). */
  sendDigits(digits: string): void {
    const send = this.#line?.dtmf;
    if (!send) throw new TalkError("capability_unsupported", "This line has no DTMF message.");
    send(digits);
    this.#line?.flush?.();
  }

  /** True while audio is queued here or sent and not yet confirmed played. */
  get playing(): boolean {
    return this.#framer.queuedMs > 0 || this.#framer.hasBurst || this.#tracker.playing;
  }

  write(chunk: AudioChunk, meta: { turnId: string; itemId: string }): void {
    if (this.#closed) return;
    const audio = this.#audio.fromChunk(chunk);
    if (audio.byteLength === 0) return;
    this.#heardToEnd.delete(meta.itemId);
    this.#tracker.produced(meta.itemId, audio.byteLength / this.#audio.bytesPerMs);
    this.#framer.push(meta.itemId, audio);
    this.#pump();
  }

  clear(_meta: { turnId: string; itemId?: string; reason: TerminalReason }): void {
    this.#framer.clear();
    this.#tracker.clear();
    this.#endMarks.clear();
    this.#resetPacing();
    this.reference.clear();
    const line = this.#line;
    if (line && this.#sentSinceClear) {
      this.#sentSinceClear = false;
      line.clear();
      line.flush?.();
      this.#onClearSent?.();
    }
    // Cleared audio will never be heard: nobody waits for it.
    this.#release(() => true);
    this.#notifyIdle();
  }

  drained(itemId: string, signal: AbortSignal): Promise<void> {
    if (this.#closed || signal.aborted) return Promise.resolve();
    this.#framer.end(itemId);
    this.#pump();
    if (this.#heardToEnd.has(itemId) || this.#tracker.producedMs(itemId) === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter: DrainWaiter = { itemId, resolve: () => finish() };
      const finish = (): void => {
        signal.removeEventListener("abort", finish);
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        resolve();
      };
      signal.addEventListener("abort", finish, { once: true });
      this.#waiters.push(waiter);
    });
  }

  heardMs(itemId: string): number {
    return this.#tracker.heardMs(itemId);
  }

  /** The carrier echoed a mark: the audio before it was played. */
  markPlayed(name: string): void {
    const position = this.#markFrames.get(name);
    if (position !== undefined) {
      this.#markFrames.delete(name);
      this.reference.acknowledged(position);
    }
    if (!this.#tracker.markPlayed(name)) return;
    const at = this.#markAt.get(name);
    if (at !== undefined) {
      // Marks are echoed in order: this one acknowledges every mark before it too.
      for (const [n, position] of this.#markAt) {
        if (position > at) break;
        this.#markAt.delete(n);
      }
      if (at > this.#playedMs) this.#playedMs = at;
    }
    const ended = this.#endMarks.get(name);
    if (ended !== undefined) {
      this.#endMarks.delete(name);
      this.#heardToEnd.add(ended);
      if (this.#heardToEnd.size > 64)
        this.#heardToEnd.delete(this.#heardToEnd.values().next().value as string);
      this.#release((w) => w.itemId === ended);
    }
    if (!this.playing) this.#notifyIdle();
    if (this.#maxUnplayedMs !== undefined) this.#pump();
  }

  /** Audio sent and not yet acknowledged played, ms. */
  get unplayedMs(): number {
    return this.#sentMs - this.#playedMs;
  }

  /** Resolves once nothing is queued or unconfirmed (the caller heard everything sent). */
  whenIdle(signal: AbortSignal): Promise<void> {
    if (!this.playing || signal.aborted || this.#closed) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        signal.removeEventListener("abort", done);
        this.#idleWaiters = this.#idleWaiters.filter((w) => w !== done);
        resolve();
      };
      signal.addEventListener("abort", done, { once: true });
      this.#idleWaiters.push(done);
    });
  }

  /** Stops sending; releases every waiter. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#framer.clear();
    this.reference.clear();
    this.#line = undefined;
    this.#release(() => true);
    this.#notifyIdle();
  }

  #pump(): void {
    const line = this.#line;
    if (!line || this.#closed) return;
    while (this.#framer.hasBurst) {
      // The carrier's buffer is as full as it may be: the next acknowledgement pumps again.
      if (this.#maxUnplayedMs !== undefined && this.unplayedMs >= this.#maxUnplayedMs) return;
      if (line.bufferedAmount >= this.#highWater) {
        // Backpressure: try again once the socket has written some of its buffer.
        this.#timer ??= setTimeout(() => {
          this.#timer = undefined;
          this.#pump();
        }, this.#pollMs);
        return;
      }
      for (const out of this.#framer.takeBurst()) {
        if (out.type === "media") {
          line.media(out.payload);
          this.#mirror(out.payload, out.frames);
          this.#tracker.sent(out.itemId, out.ms);
          this.#sentMs += out.ms;
          this.framesSent += out.frames;
          this.#sentSinceClear = true;
          if (out.itemId !== this.#lastItemSent) {
            this.#lastItemSent = out.itemId;
            this.#onItemFirstFrame?.(out.itemId);
          }
        } else {
          line.mark(out.name);
          this.#markFrames.set(out.name, this.reference.position);
          // A carrier that never echoes some marks must not grow this without bound.
          if (this.#markFrames.size > 1000) this.#markFrames.delete(this.#markFrames.keys().next().value!);
          this.#tracker.markSent(out.name, out.itemId);
          if (this.#maxUnplayedMs !== undefined) this.#markAt.set(out.name, this.#sentMs);
          if (out.endOfItem) this.#endMarks.set(out.name, out.itemId);
        }
      }
    }
  }

  /** The echo reference counts frames: a message of several is mirrored frame by frame (views, no copy). */
  #mirror(payload: Uint8Array, frames: number): void {
    if (frames === 1) return this.reference.sent(payload);
    const size = payload.byteLength / frames;
    for (let i = 0; i < frames; i++) this.reference.sent(payload.subarray(i * size, (i + 1) * size));
  }

  #resetPacing(): void {
    this.#playedMs = this.#sentMs;
    this.#markAt.clear();
  }

  #release(match: (w: DrainWaiter) => boolean): void {
    for (const w of this.#waiters.filter(match)) w.resolve();
  }

  #notifyIdle(): void {
    for (const w of [...this.#idleWaiters]) w();
  }
}
