import { TalkError } from "./errors.js";

export interface ReplayResult<T> {
  /** Retained events with seq greater than the requested one, oldest first. */
  events: T[];
  /** False when an event the caller missed was already evicted: the caller must resync. */
  complete: boolean;
}

/**
 * A bounded ring of recent events for reconnect and `talk.session.join`,
 * bounded in events (`capacity`), in bytes (`maxBytes`, each event's size
 * as its caller measured it, its serialized length) and in age (`maxAgeMs`),
 * whichever is reached first; the newest event is always kept. Events must
 * be pushed in increasing `seq` order (the sequencer's).
 *
 * Why an age bound: a relayed call emits about five events a second, so a
 * 1,000-event ring fills over three minutes and a long call then holds
 * ~350 KB of events nobody will replay (a reconnect asks for the last
 * seconds); the heap of a server with long calls grew for minutes, and the
 * collector's work on the full rings showed in the relay's tail. The age
 * bound never takes the ring below `AGE_FLOOR_EVENTS`, so a quiet session
 * (an stt-tts call between turns) still replays its last turns to a joiner.
 */
/** Slots a ring starts with (a relayed call's session emits a few dozen events a minute). */
const INITIAL_SLOTS = 16;
/** Events the age bound always leaves (the newest): a quiet session's last few turns. */
export const AGE_FLOOR_EVENTS = 100;

/** A ring's age bound from a setting where 0 or absent means none (runtime.replayMaxAgeMs). */
export function replayAgeBound(maxAgeMs: number | undefined): ReplayAgeBound | undefined {
  return maxAgeMs !== undefined && maxAgeMs > 0 ? { maxAgeMs } : undefined;
}

export interface ReplayAgeBound {
  /** Events older than this are evicted (beyond the newest AGE_FLOOR_EVENTS), ms. */
  maxAgeMs: number;
  /** The clock, ms (default performance.now). */
  now?: () => number;
}

export class ReplayBuffer<T extends { readonly seq: number }> {
  readonly #capacity: number;
  readonly #maxBytes: number;
  /** Grown by doubling up to `capacity`: most sessions never hold a full ring, and each one holds two of them. */
  #ring: (T | undefined)[];
  #sizes: number[];
  /** When each slot's event was pushed (ms, the age bound's clock); empty without an age bound. */
  #times: number[];
  readonly #maxAgeMs: number;
  readonly #now: () => number;
  #start = 0;
  #size = 0;
  #bytes = 0;
  /** Highest seq that fell out of the ring (0 when nothing did). */
  #evictedThrough = 0;

  constructor(capacity: number, maxBytes: number = Number.POSITIVE_INFINITY, age?: ReplayAgeBound) {
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
    const maxAgeMs = age?.maxAgeMs ?? Number.POSITIVE_INFINITY;
    if (!(maxAgeMs > 0)) {
      throw new TalkError(
        "config_invalid",
        `Replay buffer maxAgeMs must be positive, got ${String(maxAgeMs)}.`,
      );
    }
    this.#capacity = capacity;
    this.#maxBytes = maxBytes;
    this.#maxAgeMs = maxAgeMs;
    this.#now = age?.now ?? (() => performance.now());
    this.#ring = new Array<T | undefined>(Math.min(capacity, INITIAL_SLOTS));
    this.#sizes = new Array<number>(this.#ring.length).fill(0);
    this.#times = this.#aged ? new Array<number>(this.#ring.length).fill(0) : [];
  }

  get #aged(): boolean {
    return this.#maxAgeMs !== Number.POSITIVE_INFINITY;
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
    if (this.#aged) this.#evictAged(at);
  }

  /** Drops events older than maxAgeMs from the head, leaving at least AGE_FLOOR_EVENTS. */
  #evictAged(newest: number): void {
    const now = this.#now();
    this.#times[newest] = now;
    const oldest = now - this.#maxAgeMs;
    while (this.#size > AGE_FLOOR_EVENTS && this.#times[this.#start]! < oldest) this.#evictOldest();
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
    this.#times.fill(0);
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
    const times = this.#aged ? new Array<number>(slots).fill(0) : [];
    for (let i = 0; i < this.#size; i++) {
      const from = (this.#start + i) % this.#ring.length;
      ring[i] = this.#ring[from];
      sizes[i] = this.#sizes[from]!;
      if (this.#aged) times[i] = this.#times[from]!;
    }
    this.#ring = ring;
    this.#sizes = sizes;
    this.#times = times;
    this.#start = 0;
  }
}
