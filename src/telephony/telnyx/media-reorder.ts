/**
 * Caller audio back in order. Telnyx does not guarantee the order of
 * `media` frames (its docs: order by `media.chunk` / `sequence_number` when
 * it matters), and a speech engine fed shuffled 20 ms frames hears noise.
 * Frames are numbered by `chunk` (consecutive over the stream's media): one
 * that arrives early waits for the frames before it, for at most `window`
 * frames; then the gap is given up (that audio is lost, as on any jittery
 * line) and what waited is played. A frame older than what was already
 * played is dropped, and so is a duplicate. A chunk far behind the
 * expected one means the numbering restarted: it starts the order afresh.
 * Chunks count from 1, so a stream whose first frames arrive swapped
 * loses nothing either. In-order audio passes through at once, uncopied.
 */

export interface MediaReorderOptions {
  /** Frames held while one is missing before the gap is skipped. Default 5 (100 ms of 20 ms frames). */
  window?: number;
  /** A chunk this far behind the expected one restarts the numbering. Default 250 (5 s). */
  restartDistance?: number;
}

export class MediaReorder {
  readonly #window: number;
  readonly #restartDistance: number;
  readonly #held = new Map<number, Uint8Array>();
  #next: number | undefined;
  /** Frames dropped: late (after their gap was skipped) or duplicates. */
  dropped = 0;
  /** Frames given up for lost (gaps skipped). */
  lost = 0;

  constructor(options: MediaReorderOptions = {}) {
    this.#window = options.window ?? 5;
    this.#restartDistance = options.restartDistance ?? 250;
  }

  /** Frames held, waiting for an earlier one. */
  get holding(): number {
    return this.#held.size;
  }

  /** One frame in; the audio now playable in order (possibly several frames joined), or undefined. */
  push(chunk: number, audio: Uint8Array): Uint8Array | undefined {
    if (this.#next === undefined) {
      // Chunks count from 1: a first frame further on waits for the ones before it (they may come next).
      if (chunk <= 1) {
        this.#next = chunk + 1;
        return audio;
      }
      this.#next = 1;
    } else if (chunk < this.#next - this.#restartDistance) {
      this.#held.clear();
      this.#next = chunk + 1;
      return audio;
    }
    const next = this.#next;
    if (chunk < next || this.#held.has(chunk)) {
      this.dropped++;
      return undefined;
    }
    if (chunk === next) {
      this.#next = chunk + 1;
      return this.#held.size === 0 ? audio : join([audio, ...this.#drain()]);
    }
    this.#held.set(chunk, audio);
    if (this.#held.size <= this.#window) return undefined;
    // Waited long enough: the missing frames are lost; play from the earliest held one.
    const earliest = Math.min(...this.#held.keys());
    this.lost += earliest - next;
    this.#next = earliest;
    return join(this.#drain());
  }

  /** The held frames that follow on from the next expected chunk, removed from the buffer. */
  #drain(): Uint8Array[] {
    const out: Uint8Array[] = [];
    let n = this.#next!;
    for (let frame = this.#held.get(n); frame !== undefined; frame = this.#held.get(n)) {
      out.push(frame);
      this.#held.delete(n);
      n++;
    }
    this.#next = n;
    return out;
  }
}

function join(frames: Uint8Array[]): Uint8Array {
  if (frames.length === 1) return frames[0]!;
  const out = new Uint8Array(frames.reduce((n, f) => n + f.byteLength, 0));
  let at = 0;
  for (const f of frames) {
    out.set(f, at);
    at += f.byteLength;
  }
  return out;
}
