/**
 * What the echo guard knows of the line's echo path, from levels alone: the echo's delay, the line's echo
 * return, the echo the reference predicts in a caller-channel frame, and the line's noise (line-noise.ts).
 * The guard (echo-guard.ts) weighs the canceller's output against these; this module decides nothing.
 *
 * The delay: the lag at which the reference's and the caller channel's 20 ms level envelopes correlate best
 * over the last 2 s, once they agree (0.5), on envelopes free of the caller. The return: the lowest
 * caller-to-reference power ratio of the last five 1 s windows of audio played throughout (an echo-only
 * window gives the echo return, a window with the caller talking only a higher ratio), plus 3 dB for a line
 * response's peaks and the windows' misalignment; 0 dB until measured (ECHO_RETURN_LOSS_DB). "The echo now"
 * is the loudest reference frame around the delay (until it is known, the loudest of the whole tail, and
 * never more than 10 dB under that) times the return.
 */
import { LineNoise } from "./line-noise.js";

/**
 * The echo return assumed until measured: a frame louder than the reference minus this may be the caller, dB.
 * 0 dB: a speakerphone's echo can come back as loud as the answer (the measured return is capped there too).
 * At 6 dB (a Geigel test's), a line returning 0-2 dB let 1-37 frames of an answer's first 3 s over the bar,
 * enough on some to start speech at the gate (echo-guard.test.ts); the real-time grid cut an echo-only answer
 * 1.7 s in at ERL 3 dB (bench/turn-taking.bench.ts --grid --seed 2). At 0 dB the offline grid and corpus gave
 * the same figures (bench/onset-latency.bench.ts): their callers start after the first measurement, and one
 * under the bar before it is heard by the double-talk test.
 */
export const ECHO_RETURN_LOSS_DB = 0;
/** Headroom over the measured echo return: a line response's peaks and a window's misalignment, dB. */
const HEADROOM_DB = 3;
/** Frames (20 ms) per window of the echo return measurement, and windows kept. */
export const WINDOW_FRAMES = 50;
export const WINDOWS = 5;
/**
 * Frames a played reference may run ahead of the line besides the echo's delay: a mirror of a remote
 * buffer is put back in step by the far end's acknowledgements, and until the first of an answer comes
 * back it leads by their round trip, or by the backlog of caller frames a process starved for CPU read
 * after its sends (12-20 frames measured; the mirror runs at most 25 past an acknowledgement).
 */
const LEAD_FRAMES = 25;
/** A reference frame under this (mean square, about -70 dBFS) played nothing the line could return. */
const PLAYING_FLOOR = 32768 ** 2 * 1e-7;
/** A window counts only when the reference was at least this loud (mean square, about -50 dBFS). */
const MIN_WINDOW_REFERENCE = 32768 ** 2 * 1e-5;
/** Frames (20 ms) of level envelopes the delay is estimated over, and how often, frames. */
const DELAY_FRAMES = 100;
const DELAY_EVERY = 5;
/** The envelopes' correlation at the best lag must reach this for the delay to be trusted. */
const MIN_CORRELATION = 0.5;
/**
 * Reference frames around the one the output frame's echo comes from (the estimated delay plus the
 * canceller's output lag): two newer (the delay is rounded to a frame, and a live mirror slips by a frame)
 * and two older (a room's or line's response). Measured with a canceller whose output lagged a frame
 * unaccounted for, the window was one newer and three older of the delay: the same frames.
 */
export const NEWER_FRAMES = 2;
export const OLDER_FRAMES = 2;
/**
 * ...but never more than 10 dB under the loudest of the whole tail: a live mirror's alignment slips by a
 * frame or two under load and the filter re-converges after each slip (bench/onset-latency.bench.ts
 * --jitter-frames 2: with no bound, echo-only calls then had onsets; bounded, none. So had a canceller output a frame
 * earlier with this window not moved with it, one frame older than the echo's source).
 */
const MAX_DROP = 0.1;
/**
 * The double-talk tests weigh a frame against the quietest one the echo cannot account for (LineNoise's
 * `echoFree`) where the caller-channel frame stands this far (power ratio, 3 dB) over the echo the
 * reference predicts in it: from NEWER_FRAMES newer than the echo's delay to ECHO_OLDER_FRAMES older (6: a
 * room's reverberation, a delay that slipped), at the measured return, each frame more than one older than
 * the delay counted ECHO_DECAY (2 dB) less per frame further back (a room's tail decays: counted whole, a
 * caller's syllable with no echo on the line stood under the reference six frames back and fell to the other
 * bar; decayed, the larger grid missed 4 of 192, not 13). Without this condition, with the reference
 * drifting (`--jitter-frames 2`), a filter that lost the echo left it 1-6 dB under its input, 0.25-0.3
 * explained, in an answer's quiet part and its pause, and the double-talk tests passed it: 9 echo-only
 * answers cut on the 7 drifting seeds traced (none before); with it, none on seeds 1-20
 * (docs/performance.md).
 */
const OVER_ECHO = 2;
const ECHO_OLDER_FRAMES = 6;
const ECHO_DECAY = 10 ** (-2 / 10);
/** Reference frames either side of the delay whose echo makes a caller-channel frame the echo's (LineNoise). */
const NOISE_ECHO_FRAMES = 1;

/** A leg's echo path, fed one 20 ms frame of levels at a time. */
export class EchoPath {
  readonly #tailFrames: number;
  /** The canceller's output lag, whole 20 ms frames: an output frame's echo comes from this much further back. */
  readonly #lagFrames: number;
  /** Levels (mean square) of the last reference and caller frames, newest last (the tail and the delay's span). */
  readonly #references: number[] = [];
  readonly #callers: number[] = [];
  #sinceEstimate = 0;
  /**
   * Frames since the speech gate last heard the caller (callerSpeaking). The delay is estimated only on
   * envelopes free of the caller: speech that goes on past a `clear` looks like the answer's echo
   * arriving later (a 55 ms echo estimated at 200 ms after a backchannel, in real time).
   */
  #sinceCaller = Number.POSITIVE_INFINITY;
  /** The current measurement window: reference and caller power summed, and frames. */
  #window = emptyWindow();
  /** Reference frames in a row, up to the newest, that played nothing the line could return. */
  #quietFor = Number.POSITIVE_INFINITY;
  /** Frames since the reference came back after a silence as long as the tail and a mirror's lead. */
  #sinceResume = 0;
  /** Caller-to-reference power ratios of the last windows with audio played. */
  readonly #returns: number[] = [];
  /** The lowest of #returns (Infinity before the first), kept as each window closes. */
  #lowestReturn = Number.POSITIVE_INFINITY;
  /** Minimum statistics of the caller channel's frame levels: the line's noise, with and without the echo's frames. */
  readonly #lineNoise = new LineNoise();
  /** The echo's delay in frames, once the envelopes agree on one. */
  delayFrames: number | undefined;

  constructor(tailFrames: number, lagFrames: number) {
    this.#tailFrames = tailFrames;
    this.#lagFrames = lagFrames;
  }

  /** The speech gate hears the caller now: the next envelopes are not the echo's alone. */
  callerSpeaking(): void {
    this.#sinceCaller = 0;
  }

  /** One frame's reference and caller levels: the line's noise, the echo return's windows, the tail, the delay's envelopes. */
  frame(reference: number, caller: number): void {
    this.#sinceCaller++;
    this.#references.push(reference);
    this.#callers.push(caller);
    if (reference < PLAYING_FLOOR) this.#quietFor++;
    else {
      if (this.#quietFor > this.#tailFrames + LEAD_FRAMES) this.#sinceResume = 0;
      this.#quietFor = 0;
    }
    this.#sinceResume++;
    // The caller frame holds the echo of the reference `delay` frames older.
    const delay = this.delayFrames ?? 0;
    this.#measure(this.#loudestReference(delay, delay), caller);
    this.#lineNoise.frame(caller, this.#echoInNewest());
    if (this.#references.length > DELAY_FRAMES + this.#tailFrames) {
      this.#references.shift();
      this.#callers.shift();
    }
    if (++this.#sinceEstimate >= DELAY_EVERY) {
      this.#sinceEstimate = 0;
      this.#estimateDelay();
    }
  }

  /** The caller-channel frame `newer` frames before the newest (power; 0 when not kept). */
  caller(newer: number): number {
    return this.#callers[this.#callers.length - 1 - newer] ?? 0;
  }

  /** Something was played within the tail: echo could be on the line. */
  get playing(): boolean {
    return this.#loudestReference(0, this.#tailFrames - 1) > 0;
  }

  /** The line's echo return as a power ratio (caller / reference): measured, with headroom, else ECHO_RETURN_LOSS_DB. */
  get echoReturn(): number {
    if (this.#returns.length === 0) return 10 ** (-ECHO_RETURN_LOSS_DB / 10);
    return Math.min(1, this.#lowestReturn * 10 ** (HEADROOM_DB / 10));
  }

  /** The lowest return measured (power ratio), undefined before the first window. */
  get measuredReturn(): number | undefined {
    return this.#returns.length === 0 ? undefined : this.#lowestReturn;
  }

  /** The line's noise (mean square): the quietest frame of the caller channel, as received, over the last second. */
  get noise(): number {
    return this.#lineNoise.noise;
  }

  /** The quietest caller-channel frame the echo cannot account for (LineNoise). */
  get echoFree(): number {
    return this.#lineNoise.echoFree;
  }

  /** The echo the line returns now (power): the loudest reference frame the echo comes from, at the return. */
  expectedEcho(): number {
    return this.#expectedReference() * this.echoReturn;
  }

  /**
   * Whether the caller-channel frame (power `input`) whose output frame is `newer` frames before the newest
   * stands OVER_ECHO over the echo the reference predicts in it (false until the delay and the return are
   * measured).
   */
  overEcho(input: number, newer: number): boolean {
    const d = this.delayFrames;
    if (d === undefined || this.#returns.length === 0) return false;
    const source = d + this.#lagFrames + newer;
    const loudest = this.#loudestReference(source - NEWER_FRAMES, source + ECHO_OLDER_FRAMES, source + 1);
    return input >= loudest * this.#lowestReturn * OVER_ECHO;
  }

  /**
   * The echo the line returns (power, at the measured return, never over the reference) from the reference
   * frame at the delay of the newest output frame; undefined until the delay and the return are measured.
   */
  echoAtDelay(): number | undefined {
    const d = this.delayFrames;
    if (d === undefined || this.#returns.length === 0) return undefined;
    const source = d + this.#lagFrames;
    return this.#loudestReference(source, source) * Math.min(1, this.#lowestReturn);
  }

  /** The loudest reference frame the echo now comes from: around the delay when known, else in the whole tail. */
  #expectedReference(): number {
    const tail = this.#loudestReference(0, this.#tailFrames - 1);
    const d = this.delayFrames;
    if (d === undefined) return tail;
    const source = d + this.#lagFrames;
    return Math.max(this.#loudestReference(source - NEWER_FRAMES, source + OLDER_FRAMES), tail * MAX_DROP);
  }

  /**
   * The loudest reference frame `from` to `to` frames before the newest (0 when none are kept), each frame older
   * than `decayAfter` counted ECHO_DECAY less per frame further back.
   */
  #loudestReference(from: number, to: number, decayAfter = Number.POSITIVE_INFINITY): number {
    const refs = this.#references;
    const newest = refs.length - 1;
    let max = 0;
    for (let lag = Math.max(0, from); lag <= to && newest - lag >= 0; lag++)
      max = Math.max(max, refs[newest - lag]! * (lag > decayAfter ? ECHO_DECAY ** (lag - decayAfter) : 1));
    return max;
  }

  /**
   * The lag (frames) at which the reference's level envelope best matches the caller channel's over the
   * last DELAY_FRAMES: the echo's delay. Kept when no lag correlates well (silence, the caller talking).
   */
  #estimateDelay(): void {
    const n = this.#callers.length;
    if (n < DELAY_FRAMES + this.#tailFrames || this.#sinceCaller < DELAY_FRAMES) return;
    const mic = envelope(this.#callers, n - DELAY_FRAMES, n);
    const reference = Float64Array.from(this.#references, Math.sqrt);
    let best = MIN_CORRELATION;
    for (let lag = 0; lag < this.#tailFrames; lag++) {
      const c = correlation(reference, n - DELAY_FRAMES - lag, mic);
      if (c >= best) {
        best = c;
        this.delayFrames = lag;
      }
    }
  }

  /**
   * One frame into the echo return's window: the reference at the echo's delay against the caller frame.
   * No frame within a mirror's lead of audio coming back after a silence as long as the tail and that lead
   * (an answer's start, a resume after a hold) is measured: there the reference may have run ahead of the
   * line, with no echo of it in the caller channel yet; the return read far too small, the bar fell with it
   * and the echo went through as the caller (an answer nobody spoke over cut itself in a starved process,
   * its mirror 15 frames ahead). The window starts afresh after them: one that merely did not count (as
   * until 2026-11-30) left the first answer unmeasured for a whole window more whenever the lead ended
   * after a window's start (1.5-2.5 s into it, not 1.5 s), and the guard assumed the 0 dB return there.
   * Shorter pauses (espeak-ng's digital silence between words) keep a window: barred by every quiet frame
   * and the tail after it (ad736b4), too few were measured, and with the reference drifting +-2 frames an
   * answer at a 3 dB echo return cut itself 61 times per 10 minutes under the 6 dB assumed; with this rule
   * 1.6, as before ad736b4 (bench/onset-latency.bench.ts --grid --jitter-frames 2, docs/performance.md).
   */
  #measure(reference: number, caller: number): void {
    if (this.#sinceResume <= LEAD_FRAMES) {
      this.#window = emptyWindow();
      return;
    }
    const w = this.#window;
    w.reference += reference;
    w.caller += caller;
    if (++w.frames < WINDOW_FRAMES) return;
    if (w.reference / w.frames >= MIN_WINDOW_REFERENCE) {
      this.#returns.push(w.caller / w.reference);
      if (this.#returns.length > WINDOWS) this.#returns.shift();
      this.#lowestReturn = Math.min(...this.#returns);
    }
    this.#window = emptyWindow();
  }

  /**
   * The echo the newest caller frame holds by the reference within NOISE_ECHO_FRAMES of the delay at the
   * measured return: 0 before any return is measured (nothing to tell it from the noise yet), Infinity while
   * the delay is unknown.
   */
  #echoInNewest(): number {
    if (this.#returns.length === 0) return 0;
    const d = this.delayFrames;
    if (d === undefined) return Number.POSITIVE_INFINITY;
    return this.#loudestReference(d - NOISE_ECHO_FRAMES, d + NOISE_ECHO_FRAMES) * this.#lowestReturn;
  }
}

/** A measurement window with nothing in it yet. */
function emptyWindow(): { reference: number; caller: number; frames: number } {
  return { reference: 0, caller: 0, frames: 0 };
}

/** Amplitude envelope (root of the levels) of levels[from, to), mean removed. */
function envelope(levels: readonly number[], from: number, to: number): Float64Array {
  const out = new Float64Array(to - from);
  let mean = 0;
  for (let i = 0; i < out.length; i++) mean += out[i] = Math.sqrt(levels[from + i]!);
  mean /= out.length;
  for (let i = 0; i < out.length; i++) out[i] = out[i]! - mean;
  return out;
}

/** Normalized correlation of envelope[from, from + mic.length) with `mic` (mean removed); 0 when either is flat. */
function correlation(envelope: Float64Array, from: number, mic: Float64Array): number {
  const n = mic.length;
  let sum = 0;
  let squares = 0;
  let ab = 0;
  let bb = 0;
  for (let i = 0; i < n; i++) {
    const a = envelope[from + i]!;
    sum += a;
    squares += a * a;
    ab += a * mic[i]!; // mic sums to 0: the reference's mean drops out of the cross term
    bb += mic[i]! * mic[i]!;
  }
  const aa = squares - (sum * sum) / n;
  return aa > 0 && bb > 0 ? ab / Math.sqrt(aa * bb) : 0;
}
