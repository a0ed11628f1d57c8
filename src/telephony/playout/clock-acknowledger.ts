/**
 * Playback acknowledgements for a carrier that sends none (its protocol's
 * `acknowledgements: "none"`): a mark is "played" once the audio sent before
 * it has had time to play at 1x, counted on a clock from the first frame, so
 * the call's heard positions and drains work the same on every carrier.
 * `clear` answers every pending mark at once, as carriers with marks do (the
 * playback tracker ignores those echoes: their audio was dropped).
 */

export interface ClockAcknowledgerOptions {
  /** Bytes of the line's audio per millisecond. Default 8 (u-law 8 kHz). */
  bytesPerMs?: number;
  /** Called when a mark is reached (the carrier would have echoed it now). */
  played(name: string): void;
  /** Clock in ms. Default performance.now. */
  now?: () => number;
}

export class ClockAcknowledger {
  readonly #bytesPerMs: number;
  readonly #played: (name: string) => void;
  readonly #now: () => number;
  /** When the audio sent so far will have played. */
  #playedAt = 0;
  readonly #pending = new Map<string, NodeJS.Timeout>();

  constructor(options: ClockAcknowledgerOptions) {
    this.#bytesPerMs = options.bytesPerMs ?? 8;
    this.#played = options.played;
    this.#now = options.now ?? (() => performance.now());
  }

  /** Audio went out: it plays after what was sent before it. */
  media(bytes: number): void {
    this.#playedAt = Math.max(this.#now(), this.#playedAt) + bytes / this.#bytesPerMs;
  }

  /** A mark went out: reached when the audio before it has played. */
  mark(name: string): void {
    const delay = Math.max(0, this.#playedAt - this.#now());
    const timer = setTimeout(() => {
      this.#pending.delete(name);
      this.#played(name);
    }, delay);
    this.#pending.set(name, timer);
  }

  /** The buffer was dropped: pending marks are answered now, in order. */
  clear(): void {
    this.#playedAt = this.#now();
    const names = [...this.#pending.keys()];
    this.close();
    for (const name of names) this.#played(name);
  }

  /** Stops every timer (the stream ended). */
  close(): void {
    for (const timer of this.#pending.values()) clearTimeout(timer);
    this.#pending.clear();
  }
}
