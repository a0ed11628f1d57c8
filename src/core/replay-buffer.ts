import { TalkError } from "./errors.js";

export interface ReplayResult<T> {
  /** Retained events with seq greater than the requested one, oldest first. */
  events: T[];
  /** False when an event the caller missed was already evicted: the caller must resync. */
  complete: boolean;
}

/**
 * A bounded ring of recent events for reconnect and `talk.session.join`,
 * bounded in events (`capacity`) and in bytes (`maxBytes`, each event's size
 * as its caller measured it, its serialized length), whichever is reached
 * first; the newest event is always kept. Events must be pushed in
 * increasing `seq` order (the sequencer's).
 */
/** Slots a ring starts with (a relayed call's session emits a few dozen events a minute). */
const INITIAL_SLOTS = 16;

export class ReplayBuffer<T extends { readonly seq: number }> {
  readonly #capacity: number;
  readonly #maxBytes: number;
  /** Grown by doubling up to `capacity`: most sessions never hold a full ring, and each one holds two of them. */
  #ring: (T | undefined)[];
  #sizes: number[];
  #start = 0;
  #size = 0;
  #bytes = 0;
  /** Highest seq that fell out of the ring (0 when nothing did). */
  #evictedThrough = 0;

  constructor(capacity: number, maxBytes: number = Number.POSITIVE_INFINITY) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new TalkError(
        "config_invalid",
        `Replay buffer capacity must be a positive integer, got ${String(capacity)}.`,
      );
    }
    if (!(maxBytes > 0)) {
      throw new TalkError(
        "config_invalid",
        `Replay buffer maxBytes must be positive, got ${String(maxBytes)}.`,
      );
    }
    this.#capacity = capacity;
    this.#maxBytes = maxBytes;
    this.#ring = new Array<T | undefined>(Math.min(capacity, INITIAL_SLOTS));
    this.#sizes = new Array<number>(this.#ring.length).fill(0);
  }

  get size(): number {
    return this.#size;
  }

  get capacity(): number {
    return this.#capacity;
  }

  /** Bytes held (the sum of the sizes pushed with the retained events). */
  get bytes(): number {
    return this.#bytes;
  }

  /** Adds `event` of `bytes` (default 0: only the event bound applies), evicting the oldest as needed. */
  push(event: T, bytes = 0): void {
    if (this.#size === this.#capacity) this.#evictOldest();
    if (this.#size === this.#ring.length) this.#grow();
    const at = (this.#start + this.#size) % this.#ring.length;
    this.#ring[at] = event;
    this.#sizes[at] = bytes;
    this.#size += 1;
    this.#bytes += bytes;
    while (this.#bytes > this.#maxBytes && this.#size > 1) this.#evictOldest();
  }

  replay(afterSeq: number): ReplayResult<T> {
    const events: T[] = [];
    for (let i = 0; i < this.#size; i++) {
      const event = this.#ring[(this.#start + i) % this.#ring.length];
      if (event && event.seq > afterSeq) events.push(event);
    }
    return { events, complete: afterSeq >= this.#evictedThrough };
  }

  clear(): void {
    this.#ring.fill(undefined);
    this.#sizes.fill(0);
    this.#start = 0;
    this.#size = 0;
    this.#bytes = 0;
  }

  #evictOldest(): void {
    const evicted = this.#ring[this.#start];
    if (evicted) this.#evictedThrough = evicted.seq;
    this.#bytes -= this.#sizes[this.#start] ?? 0;
    this.#ring[this.#start] = undefined;
    this.#sizes[this.#start] = 0;
    this.#start = (this.#start + 1) % this.#ring.length;
    this.#size -= 1;
  }

  /** Twice the slots (at most `capacity`), the events kept in order from slot 0. */
  #grow(): void {
    const slots = Math.min(this.#capacity, this.#ring.length * 2);
    const ring = new Array<T | undefined>(slots);
    const sizes = new Array<number>(slots).fill(0);
    for (let i = 0; i < this.#size; i++) {
      const from = (this.#start + i) % this.#ring.length;
      ring[i] = this.#ring[from];
      sizes[i] = this.#sizes[from]!;
    }
    this.#ring = ring;
    this.#sizes = sizes;
    this.#start = 0;
  }
}
