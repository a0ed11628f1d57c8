/**
 * The echo canceller's reference on a phone line: a mirror of the carrier's
 * playback buffer. Every media frame the playout sends is appended; each
 * caller frame that arrives takes the same span from the front (the carrier
 * plays its buffer at 1x on the line's clock, the caller's frames come on
 * the same clock), so what is taken is what was played while that caller
 * audio was captured. A `clear` empties it (the carrier drops its buffer:
 * unplayed audio never reaches the reference), as does a new socket.
 *
 * The carrier's acknowledgements (marks) keep the mirror honest: a caller
 * frame takes audio at most `SLACK_FRAMES` beyond the last acknowledged
 * position (a carrier whose playback stalls plays nothing, and its echo is
 * none), and an acknowledgement beyond the mirror's head drops what the
 * carrier has evidently played already (the caller's frames came late).
 * An acknowledgement behind the head puts back what the carrier has not
 * played yet: the carrier sends its mark in order with the caller's frames,
 * so the caller's next frame is captured right after the mark's position
 * played. The head runs ahead when caller frames captured before the audio
 * reached the carrier are handled after it was sent: a process starved for
 * CPU reads a backlog of them after its sends (measured, 12-20 frames: the
 * echo then fell outside the canceller's tail and its guard's window, and
 * an answer nobody spoke over interrupted itself), and a network's round
 * trip leaves the same lead at each answer's start.
 *
 * Frames are kept in the wire format and decoded only when taken.
 *
 * A Talk API client's leg keeps one too (client-reference.ts): the audio sent
 * to the client as 20 ms frames, acknowledged by the client's `playback`
 * reports instead of a carrier's marks.
 */

/** Two minutes of audio at most (the framer's own bound); older audio is dropped first. */
const MAX_FRAMES = 6000;
/** Frames (20 ms) the mirror may run ahead of the last acknowledgement: a mark's interval and its round trip. */
const SLACK_FRAMES = 25;
/**
 * Frames the head may stand past an acknowledged position before it is put back: the carrier echoes a mark
 * as playback crosses it, somewhere inside a caller frame, so a frame either way is the mark's own grain.
 */
const REWIND_TOLERANCE = 1;

export class LineReference {
  readonly #toPcm: (bytes: Uint8Array) => Int16Array;
  /** Bytes per sample of the wire format (G.711: 1, PCM16: 2), when known: skip() then decodes nothing. */
  readonly #bytesPerSample: number | undefined;
  #frames: Uint8Array[] = [];
  /** The last frames taken (the head can be at most SLACK_FRAMES past an acknowledgement), oldest first. */
  #taken: Uint8Array[] = [];
  /** Samples of the head frame already taken. */
  #headOffset = 0;
  #head: Int16Array | undefined;
  /** Frames ever sent, and the position the carrier acknowledged played (both counted from the first frame). */
  #sentTotal = 0;
  #acked = 0;

  constructor(toPcm: (bytes: Uint8Array) => Int16Array, bytesPerSample?: number) {
    this.#toPcm = toPcm;
    this.#bytesPerSample = bytesPerSample;
  }

  /** Audio still in the carrier's buffer, frames (tests, metrics). */
  get queuedFrames(): number {
    return this.#frames.length;
  }

  /** One media frame sent to the carrier. */
  sent(frame: Uint8Array): void {
    this.#frames.push(frame);
    this.#sentTotal++;
    if (this.#frames.length > MAX_FRAMES) this.#shift();
  }

  /** Frames sent so far: the position a mark sent now stands for. */
  get position(): number {
    return this.#sentTotal;
  }

  /**
   * The carrier played everything up to `position` (a mark came back, in order with the caller's frames):
   * the caller's next frame carries the echo of what follows it.
   */
  acknowledged(position: number): void {
    if (position <= this.#acked) return;
    this.#acked = position;
    while (this.#frames.length > 0 && this.#headIndex < position) this.#shift();
    const ahead = Math.min(this.#headIndex - position, this.#taken.length);
    if (ahead > REWIND_TOLERANCE) this.#rewind(ahead);
  }

  /** Frames the mirror was put back by (tests, metrics). */
  rewoundFrames = 0;

  /** The carrier's buffer was dropped (clear, a new socket): nothing sent is left to play. */
  clear(): void {
    this.#frames = [];
    this.#taken = [];
    this.#head = undefined;
    this.#headOffset = 0;
    this.#acked = this.#sentTotal;
  }

  /** What was played over the next `samples` of line time: PCM, silence where nothing was buffered. */
  take(samples: number): Int16Array {
    const out = new Int16Array(Math.max(0, samples));
    let filled = 0;
    while (filled < out.length && this.#frames.length > 0 && this.#headIndex < this.#acked + SLACK_FRAMES) {
      this.#head ??= this.#toPcm(this.#frames[0]!);
      const n = Math.min(out.length - filled, this.#head.length - this.#headOffset);
      out.set(this.#head.subarray(this.#headOffset, this.#headOffset + n), filled);
      filled += n;
      this.#headOffset += n;
      if (this.#headOffset >= this.#head.length) this.#shift();
    }
    return out;
  }

  /**
   * The line's clock moved by `samples` and nobody needs what was played (a
   * passthrough call has no echo canceller): the same frames leave the mirror
   * as take() would drop, without decoding them or allocating the PCM.
   */
  skip(samples: number): void {
    let left = samples;
    while (left > 0 && this.#frames.length > 0 && this.#headIndex < this.#acked + SLACK_FRAMES) {
      const length = this.#head?.length ?? this.#samplesOf(this.#frames[0]!);
      const n = Math.min(left, length - this.#headOffset);
      left -= n;
      this.#headOffset += n;
      if (this.#headOffset >= length) this.#shift();
    }
  }

  /** Samples in a frame of the wire format, without decoding it when the byte width is known. */
  #samplesOf(frame: Uint8Array): number {
    return this.#bytesPerSample !== undefined
      ? Math.floor(frame.byteLength / this.#bytesPerSample)
      : this.#toPcm(frame).length;
  }

  /** Position of the frame at the head. */
  get #headIndex(): number {
    return this.#sentTotal - this.#frames.length;
  }

  #shift(): void {
    const frame = this.#frames.shift();
    if (frame) this.#taken.push(frame);
    if (this.#taken.length > SLACK_FRAMES) this.#taken.shift();
    this.#head = undefined;
    this.#headOffset = 0;
  }

  /** Puts the last `frames` taken back at the head (a partly taken head plays again from its start). */
  #rewind(frames: number): void {
    this.#frames.unshift(...this.#taken.splice(this.#taken.length - frames, frames));
    this.#head = undefined;
    this.#headOffset = 0;
    this.rewoundFrames += frames;
  }
}
