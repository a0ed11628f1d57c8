/**
 * Echo cancellation on a media leg's caller audio, before the speech gate and
 * STT: on a speakerphone or a leaky line the caller's channel carries the
 * assistant's own voice back, and without this the gate hears it as speech
 * and the answer interrupts itself.
 *
 * Core names no DSP: the composition root injects an `EchoCancellerFactory`
 * (the codecs' canceller), the adapter hands the leg, with each
 * piece of caller audio, the assistant audio that was played into the line
 * over the same span (a phone playout mirrors the carrier's buffer: what it
 * sent, consumed in step with the caller's frames, dropped on clear). One
 * canceller per leg, created when the leg starts, closed with it.
 *
 * What survives: the adaptive filter needs seconds to converge (about 10 dB
 * of echo removed in the first two, 25 dB after four, on espeak-ng answers)
 * and a live line's delay jitters, so a residual stays that the gate's
 * -45 dBFS floor hears. A 20 ms frame of the canceller's output quieter than
 * the echo the line returns now cannot be the caller: it is attenuated by
 * 30 dB before the gate and STT. "The echo now" is the loudest reference
 * frame around the echo's delay times the line's echo return, both measured
 * from levels (echo-path.ts); the return is assumed 0 dB until measured: the
 * loudest a speakerphone returns, and the most a measured return
 * can be. (A Geigel test's 6 dB let a 0-2 dB speakerphone's echo through in
 * the first second of an answer: echo-guard.test.ts.) A caller on a handset
 * (little echo) is held to the assistant's level by the bar only for the first
 * second of the first answer; the double-talk test hears them under it. The
 * loudest frame of the whole tail held a caller at the answer's own level to
 * its louder syllables: measured on the turn-taking corpus
 * (bench/onset-latency.bench.ts), the first 100-500 ms of speech over the
 * answer were cut as residual. A frame must also stand 10 dB above the line's
 * noise (the quietest frame of the last second of the caller channel as
 * received, before the canceller): noise let through between suppressed
 * frames looks like onsets to the gate's noise floor. Taken from the
 * canceller's output instead, the floor sank under the line's noise wherever
 * the filter, adapting on echo and babble at once, took part of the noise
 * with the echo (4-5 dB in a babble call of the corpus), and babble
 * then passed as onsets: measured, calls with a false onset in noise 13 ->
 * 6 of 72 (docs/performance.md). Through a continuous answer that quietest
 * frame is the echo's own; the double-talk tests below weigh a frame against
 * the quietest one the echo cannot account for instead (line-noise.ts;
 * echo-path.ts, OVER_ECHO).
 * Caller speech above the bar passes whole, and must then last `minSpeechMs`
 * at the gate to interrupt (BargeInPolicy decides whether it does); a frame
 * over the bar but more than 3 dB louder than its input is a misadapted
 * filter's, not the caller's, and is weighed as one under it (OVER_BAR_MAX_GAIN).
 *
 * Double talk under the bar: a caller at the answer's own level (an echo
 * return of 6 dB) stays under the bar for most of their first syllables, so
 * the interruption waited for a dip in the answer (1.5 s in the corpus's
 * slowest call). With `doubleTalk`, a canceller that can tell how much of its
 * output the reference still explains (a coherence measure, the codecs') lets
 * such a frame through when the reference explains under a fifth of it at
 * the echo's delay (two frames either side of the estimate, or any lag of
 * the tail until it is known) and the unexplained part stands 10 dB over
 * the line's noise: residual echo is coherent with what was played, the
 * caller is not. Measured offline, the slowest interruption 1538 -> 661 ms
 * with no echo-only call cut, with or without the reference drifting
 * (docs/performance.md). A frame more than 6 dB louder than the caller frame
 * it comes from is not the caller, whatever the coherence: that is a filter
 * misadapted by a slip putting out its own estimate of echo that is not there.
 * With `residualVad` on, the Silero VAD on the output must also hear speech in the frame (0.7): noise that
 * switches on during the answer is unexplained too.
 *
 * With `residualVad` (on by default), a second test for a frame under the bar: the Silero VAD on the
 * canceller's output (fed only while echo could be on the line) hears speech, the output stands 6 dB over
 * the residual the canceller's measured attenuation leaves, 1-10 dB under its input, and the reference
 * explains under 0.35 of it (0.6 within five frames of a frame let through as double talk); early in the first
 * answer, while the filter has taken under 6 dB off, the level test is skipped for a frame 10 dB over the noise
 * bar (double-talk.ts, UNCONVERGED_OVER_NOISE). Offline, on the
 * talker-to-echo grid without drift, it halved the onset where the caller is up to 6 dB under the echo with
 * no echo-only call cut; with the reference drifting, on ten seeds, the same echo-only cuts as without it
 * and fewer missed interruptions (docs/performance.md).
 */
import { TalkError } from "../../core/index.js";
import { DoubleTalk } from "./double-talk.js";
import { EchoPath, NEWER_FRAMES, OLDER_FRAMES, WINDOW_FRAMES, WINDOWS } from "./echo-path.js";
import { ForeignPitch } from "./foreign-pitch.js";

/** One canceller's state (per leg). */
export interface EchoCancellerPort {
  /** How far its output lags the caller audio it comes from, ms (a frame of overlap-add, say). Default 0. */
  readonly outputLagMs?: number;
  /** Assistant audio as it is played into the line (16-bit PCM at the leg's rate). */
  played(pcm: Int16Array): void;
  /** Caller audio; returns the whole frames completed so far with the echo removed. */
  process(mic: Int16Array): Int16Array;
  /**
   * The largest fraction (0-1) of the last output frame's power that the reference explains at a delay of
   * `from`..`to` 20 ms frames; offered by a canceller created with `doubleTalk`.
   */
  explainedWithin?(from: number, to: number): number;
  /** As explainedWithin, less what an unrelated output would read by chance; offered with it or not at all. */
  explainedBeyondChanceWithin?(from: number, to: number): number;
  /** Frees the state. Idempotent. */
  close(): void;
}

/**
 * A words probe on the canceller's output (bench/onset-latency.bench.ts --words): fed every output frame
 * while echo could be on the line, before any attenuation, with whether the guard holds it as echo.
 * Returns whether the caller's own words (words not of the answer) were heard recently: the held frame
 * passes as double talk. `explained`: for a frame under the bar, the fraction of it the reference explains
 * (the coherence test's), when the canceller tells.
 */
export interface WordsProbePort {
  frame(pcm: Int16Array, held: boolean, explained?: number): boolean;
  /** Nothing played within the tail: the window starts afresh. */
  idle(): void;
}

export type EchoCancellerFactory = (options: {
  sampleRate: number;
  tailMs: number;
  denoise: boolean;
  doubleTalk: boolean;
}) => EchoCancellerPort;

/** talk.input.echoCancellation. */
export interface EchoCancellationOptions {
  /** Cancel on legs whose adapter supplies the played reference (phone calls). Default true. */
  enabled?: boolean;
  /** Longest echo path covered (line delay + response), ms, 20-1000. Default 300. */
  tailMs?: number;
  /** Also suppress stationary noise. Default false. */
  denoise?: boolean;
  /** Let a caller talking over the answer through where the reference does not explain the canceller's output. Default true. */
  doubleTalk?: boolean;
  /** Also let a frame under the bar through where the Silero VAD hears speech in the canceller's output. Default true. */
  residualVad?: boolean;
  /**
   * With doubleTalk, also let a frame under the bar through where the canceller's output holds a voice at a pitch
   * the answer around the echo's delay does not have (foreign-pitch.ts). Default true.
   */
  foreignVoice?: boolean;
  /**
   * With doubleTalk and residualVad, also let a frame under the bar through where the answer around the echo's delay
   * is voiced and the canceller's output holds none of its pitch (foreign-pitch.ts, echoPitch). Default true.
   */
  echoPitchGone?: boolean;
}

export type ResolvedEchoCancellation = Readonly<Required<EchoCancellationOptions>>;

/** Validates talk.input.echoCancellation (config_invalid naming the key); defaults filled in. */
export function resolveEchoCancellation(
  options: EchoCancellationOptions = {},
  key = "talk.input.echoCancellation",
): ResolvedEchoCancellation {
  const {
    enabled = true,
    tailMs = 300,
    denoise = false,
    doubleTalk = true,
    residualVad = true,
    foreignVoice = true,
    echoPitchGone = true,
  } = options;
  for (const [name, value] of Object.entries({
    enabled,
    denoise,
    doubleTalk,
    residualVad,
    foreignVoice,
    echoPitchGone,
  }))
    if (typeof value !== "boolean")
      throw new TalkError("config_invalid", `${key}.${name} must be true or false.`);
  if (typeof tailMs !== "number" || !Number.isInteger(tailMs) || tailMs < 20 || tailMs > 1000)
    throw new TalkError("config_invalid", `${key}.tailMs must be an integer from 20 to 1000, got ${tailMs}.`);
  return Object.freeze({ enabled, tailMs, denoise, doubleTalk, residualVad, foreignVoice, echoPitchGone });
}

export { ECHO_RETURN_LOSS_DB } from "./echo-path.js";
/**
 * Attenuation of a frame that can only be residual echo. Not to silence: under a quiet echo these frames are the
 * quietest the gate hears, its VAD's noise floor, under which a gap before an onset weighs a quarter
 * (codecs/vad.ts, QUIET_GAP_WEIGHT; test/bench/onset-grid.test.ts has the quiet caller it is for).
 */
const RESIDUAL_GAIN = 10 ** (-30 / 20);
/**
 * The reference frames whose pitches an output frame's foreign voice is weighed against: from this many newer
 * than the echo's delay (its estimate's own span, NEWER_FRAMES, and one more) to this many older (a room's
 * reverberation keeps a pitch 100 ms on).
 */
const FOREIGN_NEWER_FRAMES = 3;
const FOREIGN_OLDER_FRAMES = 5;
/** A frame must be this far above the line's noise (power ratio, 10 dB) to pass. */
const NOISE_MARGIN = 10;
/**
 * A frame over the bar passes whole only if it comes out no more than this (power ratio, 3 dB) louder than the caller
 * frame it comes from; a louder one is weighed by the double-talk tests as a frame under the bar. The canceller takes
 * its estimate of the echo off the caller's channel, so a caller over the echo leaves the output at or under its
 * input; a filter misadapted after the reference slipped adds an estimate of echo that is not there, and such frames
 * stood over the bar 2-4 dB louder than their input: drifting seed 6's line at ERL 6 dB, 8.5 s into its answer, four of
 * them within 140 ms were the gate's run (bench/onset-latency.bench.ts --grid --seeds 6 --per-cell 2 --echo-minutes 6
 * --erls 3,6 --ters=-6,-3,0 --jitter-frames 2 --trace grid-echo-erl6-15@8500). Drifting seeds 1-20, a process each:
 * echo-only answers cut 8 -> 6 in 244 min at 3 dB (seeds 6 and 15), the same 6 at 2 dB with one caller 20 ms later,
 * 5 at 1 dB with 3 later and one more missed; without drift nothing changed, frame for frame (the grid's 1,008
 * calls, the corpus's onsets).
 */
const OVER_BAR_MAX_GAIN = 10 ** (3 / 10);
/** What a leg's guard saw over its call: what ops read to tell a speakerphone from a handset. */
export interface EchoStats {
  /** 20 ms frames of caller audio that came while the answer's echo could be on the line. */
  frames: number;
  /** ...of which attenuated as residual echo. */
  suppressedFrames: number;
  /** ...of which under the bar but let through as the caller talking over the answer. */
  doubleTalkFrames: number;
  /** The line's echo return loss as measured (the lowest of the last windows), dB; absent until measured. */
  echoReturnLossDb?: number;
  /** The echo's delay as estimated, ms; absent until the envelopes agreed on one. */
  delayMs?: number;
}

/** The leg's canceller: caller audio in, caller audio minus the played reference out. */
export class EchoGuard {
  readonly #canceller: EchoCancellerPort;
  /** Samples per 20 ms, the unit levels are taken over. */
  readonly #frame: number;
  readonly #tailFrames: number;
  /** The canceller's output lag, whole 20 ms frames. */
  readonly #lagFrames: number;
  /** The delay, the return, the predicted echo and the line's noise, from levels (echo-path.ts). */
  readonly #path: EchoPath;
  #closed = false;
  /** Frames weighed against the bar: caller audio while echo could be on the line (stats). */
  framesUnderEcho = 0;
  /** Frames attenuated as residual echo (tests, metrics). */
  suppressedFrames = 0;
  /** Frames under the bar let through as the caller talking over the answer (tests, metrics). */
  doubleTalkFrames = 0;
  /** The double-talk tests for frames under the bar (double-talk.ts). */
  readonly #doubleTalk: DoubleTalk;
  /**
   * The frame being weighed: the caller channel and the canceller's output it is in, its span, and whether the
   * output is the input's frames one for one (no lag, nothing carried), so the filter's estimate can be read.
   */
  #weighed: { mic: Int16Array; out: Int16Array; at: number; end: number; aligned: boolean } = {
    mic: new Int16Array(0),
    out: new Int16Array(0),
    at: 0,
    end: 0,
    aligned: false,
  };

  /** The pitches of the reference and the output, for the double-talk tests' pitch tests (with `doubleTalk`). */
  readonly #pitch: ForeignPitch | undefined;
  /** Which pitch tests run (`foreignVoice`, `echoPitchGone`). */
  readonly #foreignVoice: boolean;
  readonly #echoPitchGone: boolean;
  /** The output frame being weighed, counted back from the newest (0) of the canceller's last output. */
  #newer = 0;

  /** The words probe, when given (a bench's, for now). */
  readonly #words: WordsProbePort | undefined;

  constructor(
    create: EchoCancellerFactory,
    options: ResolvedEchoCancellation,
    sampleRate: number,
    words?: WordsProbePort,
  ) {
    this.#words = words;
    this.#canceller = create({
      sampleRate,
      tailMs: options.tailMs,
      denoise: options.denoise,
      doubleTalk: options.doubleTalk,
    });
    this.#frame = sampleRate / 50;
    this.#tailFrames = Math.max(1, Math.ceil(options.tailMs / 20));
    this.#lagFrames = Math.round((this.#canceller.outputLagMs ?? 0) / 20);
    this.#path = new EchoPath(this.#tailFrames, this.#lagFrames);
    this.#doubleTalk = new DoubleTalk(sampleRate, options.residualVad, WINDOW_FRAMES, WINDOWS, {
      explained: () => this.#explainedNow(),
      explainedBeyondChance: () => this.#explainedBy(this.#canceller.explainedBeyondChanceWithin),
      filterFindsEcho: () => this.#filterFindsEcho(),
      foreignPitch: () => this.#foreignPitch(),
      echoPitch: (minVoiced) => this.#echoPitch(minVoiced),
    });
    this.#foreignVoice = options.doubleTalk && options.foreignVoice;
    // The echo-pitch test asks the residual detector's VAD: only where DoubleTalk runs one (residualVad, a Silero rate).
    this.#echoPitchGone = options.doubleTalk && options.echoPitchGone && this.#doubleTalk.hearsResidual;
    if (this.#foreignVoice || this.#echoPitchGone)
      this.#pitch = new ForeignPitch(sampleRate, this.#tailFrames + this.#lagFrames + FOREIGN_OLDER_FRAMES);
  }

  /**
   * `reference` is what was played into the line over the same span as `mic`
   * (silence when absent). Returns the cleaned audio (whole frames; a partial
   * frame waits for the next call); empty once closed.
   */
  process(mic: Int16Array, reference: Int16Array | undefined): Int16Array {
    if (this.#closed) return new Int16Array(0);
    const played = reference ?? new Int16Array(0);
    if (played.length > 0) this.#canceller.played(played);
    for (let at = 0; at < mic.length; at += this.#frame) {
      const end = Math.min(mic.length, at + this.#frame);
      this.#path.frame(meanSquare(played, at, end), meanSquare(mic, at, end));
      this.#pitch?.played(played.subarray(Math.min(at, played.length), Math.min(end, played.length)));
    }
    const out = this.#canceller.process(mic);
    // Nothing played within the tail: no echo to bar (the loudest of the tail, found without a copy per call).
    if (!this.#path.playing) {
      if (this.#pitch)
        for (let at = 0; at < out.length; at += this.#frame)
          this.#pitch.output(out.subarray(at, at + this.#frame));
      this.#doubleTalk.idle();
      this.#words?.idle();
      return out;
    }
    this.#doubleTalk.live();
    const echo = this.#path.expectedEcho();
    const noiseBar = this.noise * NOISE_MARGIN;
    const echoFreeBar = this.#path.echoFree * NOISE_MARGIN;
    const outFrames = Math.ceil(out.length / this.#frame);
    const weighed = this.#weighed;
    weighed.mic = mic;
    weighed.out = out;
    weighed.aligned = this.#lagFrames === 0 && out.length === mic.length;
    for (let at = 0; at < out.length; at += this.#frame) {
      const end = Math.min(out.length, at + this.#frame);
      const level = meanSquare(out, at, end);
      this.framesUnderEcho++;
      // The caller channel's frame this output frame comes from (the canceller's lag behind it).
      const newer = outFrames - 1 - at / this.#frame;
      const input = this.#path.caller(newer + this.#lagFrames);
      weighed.at = at;
      weighed.end = end;
      this.#newer = newer;
      this.#pitch?.output(out.subarray(at, end));
      this.#doubleTalk.observe(out.subarray(at, end), level, input, noiseBar);
      if (level >= Math.max(echo, noiseBar) && level <= input * OVER_BAR_MAX_GAIN) {
        this.#words?.frame(out.subarray(at, end), false);
        continue;
      }
      this.#doubleTalk.underBar();
      if (this.#doubleTalkPasses(level, input, newer, echo, noiseBar, echoFreeBar)) {
        this.#words?.frame(out.subarray(at, end), false);
        this.doubleTalkFrames++;
        continue;
      }
      if (
        this.#words?.frame(out.subarray(at, end), level >= noiseBar, this.#explainedNow()) === true &&
        level >= noiseBar
      ) {
        this.doubleTalkFrames++;
        continue;
      }
      this.suppressedFrames++;
      for (let i = at; i < end; i++) out[i] = Math.round(out[i]! * RESIDUAL_GAIN);
    }
    return out;
  }

  /**
   * Whether a frame under the bar (its power `level`, the caller frame's `input`, `newer` frames before the newest,
   * the guard's expected `echo` and its two bars) is the caller talking over the answer by one of the double-talk
   * tests (double-talk.ts), weighed in their order: the coherence and residual tests, then the two pitch tests.
   */
  #doubleTalkPasses(
    level: number,
    input: number,
    newer: number,
    echo: number,
    noiseBar: number,
    echoFreeBar: number,
  ): boolean {
    const overEcho = this.#path.overEcho(input, newer);
    // Under the noise bar within the hang of a frame let through as double talk: the end of the caller's syllable,
    // weighed against the echo-free bar by the coherence test alone (double-talk.ts, DoubleTalk.caller).
    const syllableTail = !overEcho && level < noiseBar && this.#doubleTalk.withinHang();
    const bar = echoFreeBar < noiseBar && (overEcho || syllableTail) ? echoFreeBar : noiseBar;
    return (
      (level >= bar && this.#doubleTalk.caller(level, input, bar, overEcho, syllableTail)) ||
      // A voice the answer does not have is weighed against the line's echo-free noise (never over the noise bar,
      // LineNoise): through a continuous answer the noise bar rides on the echo's own quiet part, no yardstick for
      // what is not the echo.
      (this.#foreignVoice && this.#doubleTalk.foreignVoice(level, input, echoFreeBar)) ||
      // The answer's pitch gone from the output while the answer around the delay is voiced: the canceller took the
      // echo out, and what it left is weighed as not the echo (DoubleTalk.echoPitchGone).
      (this.#echoPitchGone && this.#doubleTalk.echoPitchGone(level, input, echo, echoFreeBar))
    );
  }

  /**
   * Whether the filter's own estimate of the echo in the frame being weighed (caller channel minus output)
   * accounts for all the echo the line returns from the reference frame at the echo's delay (the measured
   * return): a filter at work on this very frame, so what it leaves is not echo it missed. A filter barely
   * converged or misadapted by a slip, the case MAX_KEPT is for, finds far less: taking 0.5-1.7 dB off an echo
   * it is aligned with, its estimate is 15-24 dB under that echo (by arithmetic: 6-18% of its amplitude).
   */
  #filterFindsEcho(): boolean {
    const w = this.#weighed;
    const expected = w.aligned ? this.#path.echoAtDelay() : undefined;
    return expected !== undefined && expected > 0 && differenceSquare(w.mic, w.out, w.at, w.end) >= expected;
  }

  /**
   * How periodic the output frame being weighed is at a pitch none of the reference frames around the echo's delay
   * has (foreign-pitch.ts): from FOREIGN_NEWER_FRAMES newer than the delay to FOREIGN_OLDER_FRAMES older, or the whole
   * tail until the delay is known. 0 without the pitch analysis (`doubleTalk` off, or both pitch tests).
   */
  #foreignPitch(): number {
    if (!this.#pitch) return 0;
    const back = this.#newer + this.#lagFrames;
    const d = this.delayFrames;
    return d === undefined
      ? this.#pitch.foreign(back, back + this.#tailFrames)
      : this.#pitch.foreign(back + d - FOREIGN_NEWER_FRAMES, back + d + FOREIGN_OLDER_FRAMES);
  }

  /**
   * How periodic the output frame being weighed is at the reference's own periods around the echo's delay (the same
   * frames as #foreignPitch), undefined until the delay is known or where fewer than `minVoiced` of them are voiced.
   */
  #echoPitch(minVoiced: number): number | undefined {
    const d = this.delayFrames;
    if (!this.#pitch || d === undefined) return undefined;
    const back = this.#newer + this.#lagFrames + d;
    return this.#pitch.echoPitch(back - FOREIGN_NEWER_FRAMES, back + FOREIGN_OLDER_FRAMES, minVoiced);
  }

  /** #explained when the canceller can tell, else undefined. */
  #explainedNow(): number | undefined {
    return this.#explainedBy(this.#canceller.explainedWithin);
  }

  /** #explained by `measure` (one of the canceller's), undefined when the canceller does not offer it. */
  #explainedBy(measure: EchoCancellerPort["explainedWithin"]): number | undefined {
    return measure ? this.#explained(measure) : undefined;
  }

  /**
   * The largest fraction of the last output frame the reference explains around the echo's delay (or in the whole
   * tail), by `explainedWithin` or by `explainedBeyondChanceWithin`.
   */
  #explained(measure: NonNullable<EchoCancellerPort["explainedWithin"]>): number {
    const d = this.delayFrames;
    const lag = this.#lagFrames;
    return d === undefined
      ? measure.call(this.#canceller, lag, this.#tailFrames + lag)
      : measure.call(this.#canceller, d + lag - NEWER_FRAMES, d + lag + OLDER_FRAMES);
  }

  /** The call so far, for its summary (EchoStats). */
  stats(): EchoStats {
    const stats: EchoStats = {
      frames: this.framesUnderEcho,
      suppressedFrames: this.suppressedFrames,
      doubleTalkFrames: this.doubleTalkFrames,
    };
    const lowest = this.#path.measuredReturn;
    if (lowest !== undefined) {
      // An echo-free line measures no return at all (a ratio of 0): no finite loss to report.
      if (lowest > 0) stats.echoReturnLossDb = Math.round(-10 * Math.log10(lowest) * 10) / 10;
    }
    if (this.delayFrames !== undefined) stats.delayMs = this.delayFrames * 20;
    return stats;
  }

  /** The line's echo return as a power ratio (caller / reference): measured, else ECHO_RETURN_LOSS_DB. */
  get echoReturn(): number {
    return this.#path.echoReturn;
  }

  /** The line's noise (mean square): the quietest frame of the caller channel, as received, over the last second. */
  get noise(): number {
    return this.#path.noise;
  }

  /** The echo's delay in frames, once the envelopes agree on one (tests, metrics). */
  get delayFrames(): number | undefined {
    return this.#path.delayFrames;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#canceller.close();
    this.#doubleTalk.close();
  }

  /**
   * The leg's speech gate hears the caller now (a frame it counts as speech, hangover included). Levels
   * alone cannot tell: the guard's own verdicts follow its delay, and a frozen delay could not follow a
   * line's drift.
   */
  callerSpeaking(): void {
    this.#path.callerSpeaking();
  }
}

/** Mean square of pcm[from, to) (0 for an empty or missing span). */
function meanSquare(pcm: Int16Array, from: number, to: number): number {
  const end = Math.min(pcm.length, to);
  if (end <= from) return 0;
  let sum = 0;
  for (let i = from; i < end; i++) sum += pcm[i]! * pcm[i]!;
  return sum / (end - from);
}

/** Mean square of a[i] - b[i] over [from, to). */
function differenceSquare(a: Int16Array, b: Int16Array, from: number, to: number): number {
  const end = Math.min(a.length, b.length, to);
  if (end <= from) return 0;
  let sum = 0;
  for (let i = from; i < end; i++) sum += (a[i]! - b[i]!) ** 2;
  return sum / (end - from);
}
