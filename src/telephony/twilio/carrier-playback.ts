/**
 * How Twilio plays what it is sent on a bidirectional Media Stream, for
 * whatever plays the carrier's side (the `talkgate call` demo and the test
 * client), following Twilio's documented behaviour:
 *
 * - `media` audio is buffered and played in order, at 1x (8 bytes of u-law
 *   per ms; the caller of `play` decides how much time passed);
 * - a `mark` is echoed once the audio sent before it has played (at once
 *   when nothing is waiting);
 * - `clear` empties the buffer and echoes every mark still pending.
 */

type Queued = { kind: "audio"; data: Uint8Array; offset: number } | { kind: "mark"; name: string };

export interface CarrierPlaybackOptions {
  /** Sends the mark echo to our server (Twilio's `mark` message). */
  echo(name: string): void;
  /** Receives each piece of audio as it plays, in order (what the caller heard). */
  played?(audio: Uint8Array): void;
}

/** u-law 8 kHz: bytes per ms. */
export const ULAW_BYTES_PER_MS = 8;

export class CarrierPlayback {
  readonly #o: CarrierPlaybackOptions;
  #queue: Queued[] = [];

  constructor(options: CarrierPlaybackOptions) {
    this.#o = options;
  }

  /** True while received audio waits to be played. */
  get playing(): boolean {
    return this.#queue.some((q) => q.kind === "audio");
  }

  /** A `media` message's audio joins the buffer. */
  audio(data: Uint8Array): void {
    if (data.byteLength > 0) this.#queue.push({ kind: "audio", data, offset: 0 });
  }

  /** A `mark`: echoed when the audio before it has played (at once if none waits). */
  mark(name: string): void {
    this.#queue.push({ kind: "mark", name });
    this.play(0);
  }

  /** `clear`: the unplayed audio is dropped and every pending mark echoed, in order. */
  clear(): void {
    const pending = this.#queue.flatMap((q) => (q.kind === "mark" ? [q.name] : []));
    this.#queue = [];
    for (const name of pending) this.#o.echo(name);
  }

  /**
   * Plays up to `bytes` of the buffered audio, echoing the marks it reaches.
   * Returns the bytes played; time with nothing to play is not banked.
   */
  play(bytes: number): number {
    let credit = Math.max(0, Math.floor(bytes));
    let played = 0;
    while (this.#queue.length > 0) {
      const head = this.#queue[0]!;
      if (head.kind === "mark") {
        this.#queue.shift();
        this.#o.echo(head.name);
        continue;
      }
      const n = Math.min(credit, head.data.byteLength - head.offset);
      if (n <= 0) break;
      this.#o.played?.(head.data.subarray(head.offset, head.offset + n));
      head.offset += n;
      credit -= n;
      played += n;
      if (head.offset < head.data.byteLength) break;
      this.#queue.shift();
    }
    return played;
  }
}
