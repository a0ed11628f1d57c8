/**
 * Turns assistant audio of any chunk size (provider deltas are 20-200 ms and
 * rarely frame-aligned) into exact 20 ms u-law frames for the carrier, grouped in
 * bursts of at most `maxFramesPerBurst` frames, each burst followed by a mark.
 * Marks are what the playback tracker learns "heard" from, so the burst size
 * bounds how stale "heard" can be (default 200 ms).
 *
 * Pure and pull-based, so the sender applies backpressure: it takes a burst
 * only while the socket can take more, e.g.
 *
 *   while (framer.hasBurst && ws.bufferedAmount < highWaterMark) send(framer.takeBurst());
 *
 * and runs the loop again from the send callback when the socket drains.
 */
import { TalkError } from "../../core/index.js";

/** Options of the outbound framer. */
export interface OutboundFramerOptions {
  /** Bytes per frame. Default 160 (20 ms of u-law 8 kHz). */
  frameBytes?: number;
  /** Bytes per millisecond of the audio. Default 8 (u-law 8 kHz mono). */
  bytesPerMs?: number;
  /** Media frames per burst; a mark follows each burst. Default 10 (200 ms). */
  maxFramesPerBurst?: number;
  /**
   * Frames one media message may carry (whole frames, so the line's frame
   * alignment holds). A carrier that plays media of any length (Twilio,
   * Telnyx) gets a large provider delta as one message per burst instead of
   * one per 20 ms; marks keep the burst cadence. Default 1.
   */
  maxFramesPerMessage?: number;
  /**
   * A burst smaller than this gets no mark of its own unless it ends the
   * item: the mark comes after a later burst once this many frames went
   * unmarked. Fewer marks (and echoes) when the provider streams audio in
   * small deltas; "heard" is then at most this many frames staler. Default 1
   * (a mark after every burst).
   */
  minFramesPerMark?: number;
  /** Byte used to pad the last partial frame of an item. Default 0xff (u-law silence). */
  silenceByte?: number;
  /** Prefix of generated mark names (names are unique per framer). Default "talkgate-". */
  markPrefix?: string;
  /** Audio queued at most, bytes; pushing beyond it throws payload_too_large. Default 960 000 (2 min). */
  maxQueuedBytes?: number;
}

export type FramerOutput =
  | {
      readonly type: "media";
      readonly itemId: string;
      readonly payload: Uint8Array;
      readonly ms: number;
      /** Frames in the payload (the last of an item may be padded). */
      readonly frames: number;
    }
  | { readonly type: "mark"; readonly itemId: string; readonly name: string; readonly endOfItem: boolean };

interface QueuedItem {
  readonly itemId: string;
  chunks: Uint8Array[];
  /** Read offset into chunks[0]. */
  offset: number;
  bytes: number;
  ended: boolean;
  /** Frames of this item emitted since its last mark. */
  unmarked: number;
}

const DEFAULTS = Object.freeze({
  frameBytes: 160,
  bytesPerMs: 8,
  maxFramesPerBurst: 10,
  maxFramesPerMessage: 1,
  minFramesPerMark: 1,
  silenceByte: 0xff,
  markPrefix: "talkgate-",
  maxQueuedBytes: 960_000,
});

export class OutboundFramer {
  readonly #o: Readonly<Required<OutboundFramerOptions>>;
  readonly #frameMs: number;
  #queue: QueuedItem[] = [];
  #queuedBytes = 0;
  #markSeq = 0;

  constructor(options: OutboundFramerOptions = {}) {
    const o = {
      ...DEFAULTS,
      ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)),
    };
    for (const key of [
      "frameBytes",
      "bytesPerMs",
      "maxFramesPerBurst",
      "maxFramesPerMessage",
      "minFramesPerMark",
      "maxQueuedBytes",
    ] as const) {
      if (!Number.isInteger(o[key]) || o[key] < 1)
        throw new TalkError("config_invalid", `${key} must be a positive integer`);
    }
    if (!Number.isInteger(o.silenceByte) || o.silenceByte < 0 || o.silenceByte > 255) {
      throw new TalkError("config_invalid", "silenceByte must be a byte");
    }
    this.#o = Object.freeze(o);
    this.#frameMs = o.frameBytes / o.bytesPerMs;
  }

  /** Duration of one frame, ms. */
  get frameMs(): number {
    return this.#frameMs;
  }

  /** Audio queued and not yet taken, ms. */
  get queuedMs(): number {
    return this.#queuedBytes / this.#o.bytesPerMs;
  }

  /** True when takeBurst() would return something. */
  get hasBurst(): boolean {
    const head = this.#queue[0];
    if (head === undefined) return false;
    return head.bytes >= this.#o.frameBytes || head.ended;
  }

  /**
   * Queues audio of `itemId`. Audio of a new item ends the previous one (the
   * provider speaks one item at a time). The bytes are copied only when taken.
   */
  push(itemId: string, audio: Uint8Array): void {
    if (audio.byteLength === 0) return;
    if (this.#queuedBytes + audio.byteLength > this.#o.maxQueuedBytes) {
      throw new TalkError(
        "payload_too_large",
        `More than ${this.#o.maxQueuedBytes} bytes of output audio queued.`,
      );
    }
    let tail = this.#queue.at(-1);
    if (tail === undefined || tail.itemId !== itemId || tail.ended) {
      if (tail !== undefined) tail.ended = true;
      tail = { itemId, chunks: [], offset: 0, bytes: 0, ended: false, unmarked: 0 };
      this.#queue.push(tail);
    }
    tail.chunks.push(audio);
    tail.bytes += audio.byteLength;
    this.#queuedBytes += audio.byteLength;
  }

  /** The item's audio is complete: its last partial frame is padded and its last mark says endOfItem. */
  end(itemId: string): void {
    for (const item of this.#queue) if (item.itemId === itemId) item.ended = true;
  }

  /**
   * Up to maxFramesPerBurst media frames of the head item followed by one
   * mark; empty when no complete frame is ready. A burst never spans two
   * items, so every mark lies within one item.
   */
  takeBurst(): FramerOutput[] {
    const head = this.#queue[0];
    if (head === undefined) return [];
    const out: FramerOutput[] = [];
    const { frameBytes, maxFramesPerBurst, maxFramesPerMessage } = this.#o;
    let frames = 0;
    while (frames < maxFramesPerBurst && (head.bytes >= frameBytes || (head.ended && head.bytes > 0))) {
      // Whole frames only; an item's last partial frame goes alone, padded.
      const whole = Math.floor(head.bytes / frameBytes);
      const n = Math.max(1, Math.min(maxFramesPerMessage, maxFramesPerBurst - frames, whole));
      const payload = this.#takeFrames(head, n);
      out.push({ type: "media", itemId: head.itemId, payload, ms: n * this.#frameMs, frames: n });
      head.unmarked += n;
      frames += n;
    }
    const finished = head.ended && head.bytes === 0;
    if (finished) this.#queue.shift();
    if (finished || head.unmarked >= this.#o.minFramesPerMark) {
      out.push({
        type: "mark",
        itemId: head.itemId,
        name: `${this.#o.markPrefix}${++this.#markSeq}`,
        endOfItem: finished,
      });
      head.unmarked = 0;
    }
    return out;
  }

  /** Drops everything queued (barge-in); returns the ms dropped. Mark numbering continues. */
  clear(): number {
    const dropped = this.queuedMs;
    this.#queue = [];
    this.#queuedBytes = 0;
    return dropped;
  }

  #takeFrames(item: QueuedItem, count: number): Uint8Array {
    const frameBytes = this.#o.frameBytes * count;
    const frame = new Uint8Array(frameBytes);
    let filled = 0;
    while (filled < frameBytes && item.chunks.length > 0) {
      const chunk = item.chunks[0]!;
      const n = Math.min(frameBytes - filled, chunk.byteLength - item.offset);
      frame.set(chunk.subarray(item.offset, item.offset + n), filled);
      filled += n;
      item.offset += n;
      if (item.offset === chunk.byteLength) {
        item.chunks.shift();
        item.offset = 0;
      }
    }
    if (filled < frameBytes) frame.fill(this.#o.silenceByte, filled);
    item.bytes -= filled;
    this.#queuedBytes -= filled;
    return frame;
  }
}
