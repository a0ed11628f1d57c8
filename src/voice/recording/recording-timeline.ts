/**
 * The two tracks of a call recording on one clock, in samples from the
 * recording's start: track 1 the caller as received, track 2 the assistant as
 * played. Pure: positions come from the caller (the recorder's clock), no
 * timers, no I/O.
 *
 * - Caller audio is laid end to end as it arrives (network jitter does not
 *   tear it apart); after a real gap (nothing for more than `callerLagMs`:
 *   the stream paused, frames were lost) the next frame is placed where the
 *   clock is, the gap stays silent.
 * - Assistant audio plays at 1x from when it was sent, after what was sent
 *   before it (the carrier's buffer): a frame sent at `now` is placed at
 *   max(now, end of the audio before it).
 * - A clear (barge-in) drops the assistant audio placed at or after the
 *   clock: it was sent but never played. Audio the carrier confirmed played
 *   (`confirm`) is never dropped.
 *
 * Samples before `finalPosition(now)` can no longer change and are taken
 * (`take`) to be written; the rest stays buffered.
 */
import { TalkError } from "../../core/index.js";

export interface RecordingTimelineOptions {
  sampleRate: number;
  /** Caller audio arriving up to this late (jitter) still joins the audio before it, ms. Default 500. */
  callerLagMs?: number;
  /** Assistant audio placed more than this ahead of the clock is not recorded, ms. Default 300 000. */
  maxAheadMs?: number;
}

const INITIAL_CAPACITY = 16_384;

export class RecordingTimeline {
  readonly sampleRate: number;
  readonly #lag: number;
  readonly #maxAhead: number;
  /** Position of buffer index 0: everything before it was taken. */
  #base = 0;
  #caller = new Int16Array(INITIAL_CAPACITY);
  #assistant = new Int16Array(INITIAL_CAPACITY);
  #callerEnd = 0;
  #assistantEnd = 0;
  /** The assistant audio before this position was confirmed played by the carrier. */
  #confirmed = 0;
  /** Assistant samples not recorded (placed too far ahead). */
  droppedSamples = 0;

  constructor(options: RecordingTimelineOptions) {
    const { sampleRate } = options;
    if (!Number.isInteger(sampleRate) || sampleRate < 8000 || sampleRate > 48_000)
      throw new TalkError("config_invalid", `A recording's sample rate is 8000..48000, not ${sampleRate}.`);
    const lagMs = options.callerLagMs ?? 500;
    const aheadMs = options.maxAheadMs ?? 300_000;
    if (!Number.isFinite(lagMs) || lagMs < 20 || !Number.isFinite(aheadMs) || aheadMs < 1000)
      throw new TalkError("config_invalid", "callerLagMs must be >= 20 and maxAheadMs >= 1000.");
    this.sampleRate = sampleRate;
    this.#lag = Math.round((lagMs * sampleRate) / 1000);
    this.#maxAhead = Math.round((aheadMs * sampleRate) / 1000);
  }

  /** Samples already taken: the position the next `take` starts at. */
  get taken(): number {
    return this.#base;
  }

  /** End of the assistant audio placed so far (a mark sent now confirms up to here). */
  get assistantEnd(): number {
    return this.#assistantEnd;
  }

  get callerEnd(): number {
    return this.#callerEnd;
  }

  /** Caller audio received at `now`. */
  caller(pcm: Int16Array, now: number): void {
    if (pcm.length === 0) return;
    let at = this.#callerEnd;
    if (at < now - this.#lag) at = Math.max(at, now - pcm.length); // a gap: this frame ends now
    at = Math.max(at, this.#base);
    this.#ensure(at + pcm.length);
    this.#caller.set(pcm, at - this.#base);
    this.#callerEnd = at + pcm.length;
  }

  /** Assistant audio sent to the line at `now`; returns whether it was placed (false: too far ahead). */
  assistant(pcm: Int16Array, now: number): boolean {
    if (pcm.length === 0) return true;
    const at = Math.max(now, this.#assistantEnd, this.#base);
    if (at + pcm.length - now > this.#maxAhead) {
      this.droppedSamples += pcm.length;
      return false;
    }
    this.#ensure(at + pcm.length);
    this.#assistant.set(pcm, at - this.#base);
    this.#assistantEnd = at + pcm.length;
    return true;
  }

  /** The carrier confirmed the assistant audio before `position` played (a mark echoed). */
  confirm(position: number): void {
    if (position > this.#confirmed) this.#confirmed = position;
  }

  /** The line was cleared at `now`: the assistant audio not yet played is dropped. */
  cut(now: number): void {
    const from = Math.max(now, this.#confirmed, this.#base);
    if (this.#assistantEnd <= from) return;
    this.#assistant.fill(0, from - this.#base, this.#assistantEnd - this.#base);
    this.#assistantEnd = from;
  }

  /** The position before which nothing can change any more at `now`. */
  finalPosition(now: number): number {
    const caller = Math.max(this.#callerEnd, now - this.#lag);
    return Math.max(this.#base, Math.min(now, caller));
  }

  /** Takes the samples before `end` as interleaved stereo (caller, assistant); they leave the buffer. */
  take(end: number): Int16Array {
    const n = Math.max(0, end - this.#base);
    this.#ensure(this.#base + n);
    const out = new Int16Array(2 * n);
    const caller = this.#caller;
    const assistant = this.#assistant;
    for (let i = 0; i < n; i++) {
      out[2 * i] = caller[i]!;
      out[2 * i + 1] = assistant[i]!;
    }
    const used = Math.max(this.#callerEnd, this.#assistantEnd, this.#base + n) - this.#base;
    for (const track of [caller, assistant]) {
      track.copyWithin(0, n, used);
      track.fill(0, used - n, used); // beyond the used part the buffer stays silent
    }
    this.#base += n;
    return out;
  }

  /** The end of the call at `now`: unplayed assistant audio dropped, everything else taken. */
  takeRest(now: number): Int16Array {
    this.cut(now);
    return this.take(Math.max(this.#callerEnd, this.#assistantEnd));
  }

  /** Grows both tracks to hold positions before `end` (the part beyond what was written is silence). */
  #ensure(end: number): void {
    const need = end - this.#base;
    if (need <= this.#caller.length) return;
    let capacity = this.#caller.length;
    while (capacity < need) capacity *= 2;
    for (const key of ["caller", "assistant"] as const) {
      const grown = new Int16Array(capacity);
      grown.set(key === "caller" ? this.#caller : this.#assistant);
      if (key === "caller") this.#caller = grown;
      else this.#assistant = grown;
    }
  }
}
