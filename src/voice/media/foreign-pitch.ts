/**
 * A voice the answer does not have (issue 40's double talk proper): how periodic the canceller's output is at a
 * pitch that none of the played reference frames around the echo's delay has. An echo is the reference through a
 * line or a room, and its voiced frames keep the reference's pitch period. A caller talking over it has a pitch of
 * their own. The coherence test (echo-coherence.ts) cannot tell them apart when the echo is as loud as the caller:
 * the reference then explains most of the frame. So the output is first comb-filtered at the reference period it
 * is most periodic at, which takes the echo's voiced part out. Then it is searched for periodicity at lags that are
 * none of the reference's periods, their doubles or their halves.
 *
 * The same analysis tells the opposite case too (`echoPitch`): an output with none of the periodicity of a voiced
 * reference around the delay holds none of its echo, so what the canceller left there is something else.
 *
 * Both signals are analysed at about 8 kHz (a block average over whole multiples of it), which is enough for a
 * voice's pitch. The reference's pitch is measured only for the frames a question asks about, and the question is
 * asked only of frames the other tests hold (double-talk.ts, DoubleTalk.foreignVoice). A 20 ms frame costs nothing
 * until then.
 */

/** Pitch searched, Hz: a voice's fundamental. */
const MIN_F0_HZ = 60;
const MAX_F0_HZ = 400;
/** 20 ms frames a pitch is measured over: 60 ms holds three periods of a 60 Hz voice. */
const WINDOW_FRAMES = 3;
/**
 * The output is also read over its newest ONSET_WINDOW_FRAMES (40 ms), the higher reading kept: at a caller's onset
 * the 60 ms window is still a third or more the echo's alone, and seed 1's first caller over a voiced echo read 0.49
 * there on the frame that then broke the gate's 120 ms run (heard 343 ms after the P.56 onset at ERL 3-10 dB, TER -6..0
 * dB, the answer from 800 ms; 143 ms with both windows). Measured (bench/onset-latency.bench.ts --grid --seeds 1,2
 * --per-cell 4 --answer-start-ms 400,800,1200,1600, where TER >= -6 dB): 40 ms alone heard 59 calls sooner and 10
 * later than 60 ms alone (a caller whose pitch the shorter window does not hold); both, 62 sooner and none later.
 */
const ONSET_WINDOW_FRAMES = 2;
/** A reference window counts as voiced at its best lag from this normalized autocorrelation. */
const VOICED = 0.4;
/**
 * echoPitch reads the output at each reference period give or take this many analysis samples: a voice's pitch moves
 * within the 60 ms window, and the reference frames around the delay each hold one measured period of it.
 */
const PERIOD_SLACK = 2;
/** The rate the analysis runs at, about: a block average of the input's samples brings it there. */
const ANALYSIS_RATE = 8000;

export class ForeignPitch {
  /** Input samples averaged into one analysis sample, and analysis samples per 20 ms frame. */
  readonly #step: number;
  readonly #frame: number;
  readonly #minLag: number;
  readonly #maxLag: number;
  /** The reference frames as analysed: the tail, and a window before its oldest. */
  readonly #reference: FrameRing;
  /** The reference frames' pitch lags by slot: UNMEASURED until a question asks, 0 for unvoiced. */
  readonly #referenceLags: Int32Array;
  /** The last WINDOW_FRAMES output frames as analysed. */
  readonly #output: FrameRing;
  /**
   * Scratch for one window, its running sums of squares and its combed copy: a question allocates no buffer. The
   * output's onset window is a view of the newest ONSET_WINDOW_FRAMES of the window, not a second copy.
   */
  readonly #window: Float64Array;
  readonly #onsetWindow: Float64Array;
  readonly #squares: Float64Array;
  readonly #combed: Float64Array;
  readonly #lags: number[] = [];

  /** `tailFrames`: how far back (20 ms frames) a question may ask about the reference. */
  constructor(sampleRate: number, tailFrames: number) {
    this.#step = Math.max(1, Math.floor(sampleRate / ANALYSIS_RATE));
    const rate = sampleRate / this.#step;
    this.#frame = Math.round(rate / 50);
    this.#minLag = Math.round(rate / MAX_F0_HZ);
    this.#maxLag = Math.round(rate / MIN_F0_HZ);
    this.#reference = new FrameRing(this.#frame, tailFrames + WINDOW_FRAMES);
    this.#referenceLags = new Int32Array(this.#reference.capacity).fill(UNMEASURED);
    this.#output = new FrameRing(this.#frame, WINDOW_FRAMES);
    this.#window = new Float64Array(this.#frame * WINDOW_FRAMES);
    this.#onsetWindow = this.#window.subarray(this.#frame * (WINDOW_FRAMES - ONSET_WINDOW_FRAMES));
    this.#squares = new Float64Array(this.#window.length + 1);
    this.#combed = new Float64Array(this.#window.length);
  }

  /** One 20 ms frame of the reference as played, in step with the caller channel's frames (short: zeros after). */
  played(frame: Int16Array): void {
    const slot = this.#reference.push();
    this.#analyse(frame, this.#reference.samples, slot * this.#frame);
    this.#referenceLags[slot] = UNMEASURED;
  }

  /** One 20 ms frame of the canceller's output. */
  output(frame: Int16Array): void {
    this.#analyse(frame, this.#output.samples, this.#output.push() * this.#frame);
  }

  /**
   * The newest output window's periodicity (0-1) at a pitch that no reference frame from `from` to `to` frames back
   * (0: the newest played) has, with the reference's own period combed out first: the higher of the 60 ms window's
   * and the 40 ms one's (ONSET_WINDOW_FRAMES). 0 where every one of those frames is unvoiced: a voice over an echo
   * with no pitch of its own is not what this tells, and a room's other talkers are voices too (the corpus's babble
   * went through such a pause as a turn).
   */
  foreign(from: number, to: number): number {
    const lags = this.#lags;
    if (this.#voicedLags(from, to) === 0) return 0;
    this.#output.window(0, this.#window);
    return Math.max(this.#foreignIn(this.#window, lags), this.#foreignIn(this.#onsetWindow, lags));
  }

  /**
   * How periodic (0-1) the newest 60 ms output window still is at the reference's own periods from `from` to `to`
   * frames back (each give or take PERIOD_SLACK): how much of a voiced echo it holds. undefined where fewer than
   * `minVoiced` of those reference frames are voiced: an echo's absence is read only where its pitch would show.
   */
  echoPitch(from: number, to: number, minVoiced: number): number | undefined {
    const lags = this.#lags;
    const voiced = this.#voicedLags(from, to);
    if (voiced === 0 || voiced < minVoiced) return undefined;
    const window = this.#output.window(0, this.#window);
    const squares = runningSquares(window, this.#squares);
    let periodicity = 0;
    for (const lag of lags)
      for (
        let at = Math.max(this.#minLag, lag - PERIOD_SLACK);
        at <= lag + PERIOD_SLACK && at < window.length;
        at++
      )
        periodicity = Math.max(periodicity, correlation(window, squares, at));
    return periodicity;
  }

  /** `window`'s periodicity at a pitch none of the reference's `lags` has, the one it is most periodic at combed out. */
  #foreignIn(window: Float64Array, lags: readonly number[]): number {
    const squares = runningSquares(window, this.#squares);
    let comb = lags[0]!;
    let most = Number.NEGATIVE_INFINITY;
    for (const lag of lags) {
      const p = correlation(window, squares, lag);
      if (p > most) [most, comb] = [p, lag];
    }
    const combed = combOut(window, comb, this.#combed);
    return this.#periodicity(combed, (lag) => lags.some((t) => related(lag, t))).p;
  }

  /**
   * The distinct pitch lags of the reference frames from `from` to `to` frames back into #lags; returns how many of
   * those frames are voiced.
   */
  #voicedLags(from: number, to: number): number {
    const lags = this.#lags;
    lags.length = 0;
    let voiced = 0;
    for (let back = Math.max(0, from); back <= to; back++) {
      const lag = this.#referenceLag(back);
      if (lag === undefined || lag <= 0) continue;
      voiced++;
      if (!lags.includes(lag)) lags.push(lag);
    }
    return voiced;
  }

  /** The reference's pitch lag `back` frames back (0: unvoiced), measured once; undefined before the first frame. */
  #referenceLag(back: number): number | undefined {
    if (back >= this.#reference.length) return undefined;
    const slot = this.#reference.slot(back);
    let lag = this.#referenceLags[slot]!;
    if (lag === UNMEASURED) {
      const best = this.#periodicity(this.#reference.window(back, this.#window));
      lag = best.p >= VOICED ? best.lag : 0;
      this.#referenceLags[slot] = lag;
    }
    return lag;
  }

  /** The best normalized autocorrelation of `x` over the pitch lags `skip` does not rule out. */
  #periodicity(x: Float64Array, skip?: (lag: number) => boolean): { lag: number; p: number } {
    const squares = runningSquares(x, this.#squares);
    let best = { lag: 0, p: 0 };
    for (let lag = this.#minLag; lag <= this.#maxLag && lag < x.length; lag++) {
      if (skip?.(lag)) continue;
      const p = correlation(x, squares, lag);
      if (p > best.p) best = { lag, p };
    }
    return best;
  }

  /** A frame at the analysis rate into `out` from `at`: block averages of `step` samples (zeros past a short frame). */
  #analyse(frame: Int16Array, out: Float64Array, at: number): void {
    const step = this.#step;
    for (let i = 0; i < this.#frame; i++) {
      let sum = 0;
      for (let j = i * step; j < (i + 1) * step && j < frame.length; j++) sum += frame[j]!;
      out[at + i] = sum / step;
    }
  }
}

/** A reference frame's pitch lag not measured yet. */
const UNMEASURED = -1;

/** The last `capacity` frames of `frame` samples each, in one buffer written in place: no allocation a frame. */
class FrameRing {
  readonly samples: Float64Array;
  /** Frames held, up to capacity. */
  length = 0;
  /** The slot the next frame goes into. */
  #next = 0;

  constructor(
    readonly frame: number,
    readonly capacity: number,
  ) {
    this.samples = new Float64Array(frame * capacity);
  }

  /** The slot of a new newest frame (the oldest's, once full), for the caller to write. */
  push(): number {
    const slot = this.#next;
    this.#next = (slot + 1) % this.capacity;
    this.length = Math.min(this.capacity, this.length + 1);
    return slot;
  }

  /** The slot of the frame `back` frames before the newest (0: the newest); `back` under length. */
  slot(back: number): number {
    return (this.#next - 1 - back + 2 * this.capacity) % this.capacity;
  }

  /** The frames ending `back` frames back that fill `out`, oldest first; zeros where fewer are held. */
  window(back: number, out: Float64Array): Float64Array {
    const count = out.length / this.frame;
    for (let k = 0; k < count; k++) {
      const older = back + count - 1 - k;
      const at = k * this.frame;
      if (older >= this.length) out.fill(0, at, at + this.frame);
      else {
        const from = this.slot(older) * this.frame;
        for (let i = 0; i < this.frame; i++) out[at + i] = this.samples[from + i]!;
      }
    }
    return out;
  }
}

/** squares[i]: the sum of x[0..i) squared, into `squares` (x.length + 1 long at least). */
function runningSquares(x: Float64Array, squares: Float64Array): Float64Array {
  squares[0] = 0;
  for (let i = 0; i < x.length; i++) squares[i + 1] = squares[i]! + x[i]! * x[i]!;
  return squares;
}

/**
 * Normalized autocorrelation of x at `lag`, its two energies read from `squares` (runningSquares(x)): one
 * multiply-add a sample per lag, not three.
 */
function correlation(x: Float64Array, squares: Float64Array, lag: number): number {
  const xx = squares[x.length]! - squares[lag]!;
  const yy = squares[x.length - lag]!;
  if (!(xx > 0 && yy > 0)) return 0;
  let xy = 0;
  for (let i = lag; i < x.length; i++) xy += x[i]! * x[i - lag]!;
  return xy / Math.sqrt(xx * yy);
}

/**
 * x less its best-fitting copy `lag` samples back (the gain held to 0..1), into the start of `out`: what is periodic
 * at `lag` taken out.
 */
function combOut(x: Float64Array, lag: number, out: Float64Array): Float64Array {
  let xy = 0;
  let yy = 0;
  for (let i = lag; i < x.length; i++) {
    xy += x[i]! * x[i - lag]!;
    yy += x[i - lag]! * x[i - lag]!;
  }
  const gain = yy > 0 ? Math.max(0, Math.min(1, xy / yy)) : 0;
  const combed = out.subarray(0, x.length - lag);
  for (let i = lag; i < x.length; i++) combed[i - lag] = x[i]! - gain * x[i - lag]!;
  return combed;
}

/** `lag` is the reference's period `t`, its double or its half (within 5%, 10% for the double; 2 samples at least). */
function related(lag: number, t: number): boolean {
  return (
    Math.abs(lag - t) <= Math.max(2, 0.05 * t) ||
    Math.abs(lag - 2 * t) <= Math.max(2, 0.1 * t) ||
    Math.abs(2 * lag - t) <= Math.max(2, 0.05 * t)
  );
}
