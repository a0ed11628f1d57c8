/**
 * What the caller has actually heard. We send assistant audio to the carrier in
 * bursts, each followed by a mark; the carrier echoes a mark once everything sent
 * before it has played. So the position of the last echoed mark within an
 * item is audio heard, and a truncation at that position tells the provider
 * exactly what the caller heard.
 *
 * Positions are kept per assistant item, from that item's own start. That is
 * the fix for the known bug of Twilio's OpenAI sample, which measures the
 * truncation offset from the stream clock at the first delta of a response
 * and so cuts the second and later replies at the wrong offset.
 *
 * Pure: no clock, no I/O. All durations are in milliseconds.
 */
import { TalkError } from "../../core/index.js";

/** Options of the playback tracker. */
export interface PlaybackTrackerOptions {
  /** Items remembered; the oldest is forgotten beyond this. Default 64. */
  maxItems?: number;
  /** Marks awaiting their echo; beyond this the oldest is dropped (its audio counts as unconfirmed). Default 4096. */
  maxPendingMarks?: number;
}

interface ItemPlayback {
  /** Audio the provider produced for the item. */
  produced: number;
  /** Audio sent to the carrier for the item (may exceed produced by the padding of the last frame). */
  sent: number;
  /** Position of the last echoed mark of the item. */
  heard: number;
}

interface PendingMark {
  readonly name: string;
  readonly itemId: string;
  /** The item's sent position when the mark was sent. */
  readonly position: number;
}

export class PlaybackTracker {
  readonly #maxItems: number;
  readonly #maxPendingMarks: number;
  readonly #items = new Map<string, ItemPlayback>();
  #pending: PendingMark[] = [];

  constructor(options: PlaybackTrackerOptions = {}) {
    const maxItems = options.maxItems ?? 64;
    const maxPendingMarks = options.maxPendingMarks ?? 4096;
    if (!Number.isInteger(maxItems) || maxItems < 1)
      throw new TalkError("config_invalid", "maxItems must be a positive integer");
    if (!Number.isInteger(maxPendingMarks) || maxPendingMarks < 1) {
      throw new TalkError("config_invalid", "maxPendingMarks must be a positive integer");
    }
    this.#maxItems = maxItems;
    this.#maxPendingMarks = maxPendingMarks;
  }

  /** The provider produced `ms` more audio for `itemId`. */
  produced(itemId: string, ms: number): void {
    this.#item(itemId).produced += nonNegative(ms);
  }

  /** `ms` more audio of `itemId` was sent to the carrier. */
  sent(itemId: string, ms: number): void {
    this.#item(itemId).sent += nonNegative(ms);
  }

  /** A mark named `name` was sent after the audio of `itemId` sent so far. Names must be unique. */
  markSent(name: string, itemId: string): void {
    const item = this.#item(itemId);
    this.#pending.push({ name, itemId, position: item.sent });
    if (this.#pending.length > this.#maxPendingMarks) this.#pending.shift();
  }

  /**
   * The carrier echoed the mark `name`: all audio sent before it has played,
   * including that of earlier marks. Returns false for a name that is not
   * pending, such as the echoes the carrier sends for marks dropped by `clear`.
   */
  markPlayed(name: string): boolean {
    const index = this.#pending.findIndex((m) => m.name === name);
    if (index < 0) return false;
    for (let i = 0; i <= index; i++) {
      const mark = this.#pending[i]!;
      const item = this.#items.get(mark.itemId);
      if (item !== undefined && mark.position > item.heard) item.heard = mark.position;
    }
    this.#pending = this.#pending.slice(index + 1);
    return true;
  }

  /**
   * Audio of `itemId` the caller has heard: the position of its last echoed
   * mark, clamped to the audio the provider produced (the padding of a last
   * partial frame was never the provider's). 0 for an unknown item.
   */
  heardMs(itemId: string): number {
    const item = this.#items.get(itemId);
    return item === undefined ? 0 : Math.min(item.heard, item.produced);
  }

  producedMs(itemId: string): number {
    return this.#items.get(itemId)?.produced ?? 0;
  }

  sentMs(itemId: string): number {
    return this.#items.get(itemId)?.sent ?? 0;
  }

  /** Marks sent and not yet echoed: audio may still be playing. */
  get pendingMarks(): number {
    return this.#pending.length;
  }

  /** True while audio sent to the carrier has not all been confirmed played. */
  get playing(): boolean {
    return this.#pending.length > 0;
  }

  /**
   * The carrier's buffer was cleared (we sent `clear`): the unplayed audio is
   * gone and the carrier will echo the pending marks without having played their
   * audio, so they are dropped here and their echoes ignored. What was heard
   * stays; each item's sent position falls back to it.
   */
  clear(): void {
    this.#pending = [];
    for (const item of this.#items.values()) item.sent = item.heard;
  }

  /** Forgets an item (after it was truncated or completed and is of no more use). */
  forget(itemId: string): void {
    this.#items.delete(itemId);
    this.#pending = this.#pending.filter((m) => m.itemId !== itemId);
  }

  #item(itemId: string): ItemPlayback {
    let item = this.#items.get(itemId);
    if (item === undefined) {
      item = { produced: 0, sent: 0, heard: 0 };
      this.#items.set(itemId, item);
      if (this.#items.size > this.#maxItems) {
        const oldest = this.#items.keys().next().value as string;
        this.forget(oldest);
      }
    }
    return item;
  }
}

function nonNegative(ms: number): number {
  if (!Number.isFinite(ms) || ms < 0)
    throw new TalkError("invalid_params", `duration must be a finite non-negative number, got ${ms}`);
  return ms;
}
