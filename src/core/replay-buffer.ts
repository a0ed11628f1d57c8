import { TalkError } from "./errors.js";

export interface ReplayResult<T> {
  /** Retained events with seq greater than the requested one, oldest first. */
  events: T[];
  /** False when an event the caller missed was already evicted: the caller must resync. */
  complete: boolean;
}

/**
 * A bounded ring of recent events for reconnect and `talk.session.join`.
 * Events must be pushed in increasing `seq` order (the sequencer's).
 */
export class ReplayBuffer<T extends { readonly seq: number }> {
  readonly #capacity: number;
  readonly #ring: (T | undefined)[];
  #start = 0;
  #size = 0;
  /** Highest seq that fell out of the ring (0 when nothing did). */
  #evictedThrough = 0;

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new TalkError(
        "config_invalid",
        `Replay buffer capacity must be a positive integer, got ${String(capacity)}.`,
      );
    }
    this.#capacity = capacity;
    this.#ring = new Array<T | undefined>(capacity);
  }

  get size(): number {
    return this.#size;
  }

  get capacity(): number {
    return this.#capacity;
  }

  push(event: T): void {
    if (this.#size === this.#capacity) {
      const evicted = this.#ring[this.#start];
      if (evicted) this.#evictedThrough = evicted.seq;
      this.#ring[this.#start] = event;
      this.#start = (this.#start + 1) % this.#capacity;
      return;
    }
    this.#ring[(this.#start + this.#size) % this.#capacity] = event;
    this.#size += 1;
  }

  replay(afterSeq: number): ReplayResult<T> {
    const events: T[] = [];
    for (let i = 0; i < this.#size; i++) {
      const event = this.#ring[(this.#start + i) % this.#capacity];
      if (event && event.seq > afterSeq) events.push(event);
    }
    return { events, complete: afterSeq >= this.#evictedThrough };
  }

  clear(): void {
    this.#ring.fill(undefined);
    this.#start = 0;
    this.#size = 0;
  }
}
