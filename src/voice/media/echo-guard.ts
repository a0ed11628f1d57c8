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
 * frame around the echo's delay (estimated by cross-correlating the
 * reference's and the caller channel's 20 ms level envelopes over the last
 * 2 s; until they agree, the loudest frame of the whole tail, and never more
 * than 10 dB under that) times the line's echo return. That return is
 * measured (the lowest caller-to-reference power ratio of the last five 1 s
 * windows of audio played throughout: an echo-only window gives the echo return, a
 * window with the caller talking only a higher ratio, plus 3 dB for a line
 * response's peaks and the windows' misalignment) and assumed 0 dB until
 * measured: the loudest a speakerphone returns, and the most a measured return
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
 * the quietest one the echo cannot account for instead (line-noise.ts,
 * OVER_ECHO).
 * Caller speech above the bar passes whole, and must then last `minSpeechMs`
 * at the gate to interrupt (BargeInPolicy decides whether it does).
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
 * explains under 0.35 of it (0.6 within five frames of a frame let through as double talk). Offline, on the
 * talker-to-echo grid without drift, it halved the onset where the caller is up to 6 dB under the echo with
 * no echo-only call cut; with the reference drifting, on ten seeds, the same echo-only cuts as without it
 * and fewer missed interruptions (docs/performance.md).
 */
import { TalkError } from "../../core/index.js";
import { DoubleTalk } from "./double-talk.js";
import { LineNoise } from "./line-noise.js";

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
}

export type ResolvedEchoCancellation = Readonly<Required<EchoCancellationOptions>>;

/** Validates talk.input.echoCancellation (config_invalid naming the key); defaults filled in. */
export function resolveEchoCancellation(
  options: EchoCancellationOptions = {},
  key = "talk.input.echoCancellation",
): ResolvedEchoCancellation {
  const { enabled = true, tailMs = 300, denoise = false, doubleTalk = true, residualVad = true } = options;
  for (const [name, value] of Object.entries({ enabled, denoise, doubleTalk, residualVad }))
    if (typeof value !== "boolean")
      throw new TalkError("config_invalid", `${key}.${name} must be true or false.`);
  if (typeof tailMs !== "number" || !Number.isInteger(tailMs) || tailMs < 20 || tailMs > 1000)
    throw new TalkError("config_invalid", `${key}.tailMs must be an integer from 20 to 1000, got ${tailMs}.`);
  return Object.freeze({ enabled, tailMs, denoise, doubleTalk, residualVad });
}

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
const WINDOW_FRAMES = 50;
const WINDOWS = 5;
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
/** Attenuation of a frame that can only be residual echo. */
const RESIDUAL_GAIN = 10 ** (-30 / 20);
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
const NEWER_FRAMES = 2;
const OLDER_FRAMES = 2;
/**
 * ...but never more than 10 dB under the loudest of the whole tail: a live mirror's alignment slips by a
 * frame or two under load and the filter re-converges after each slip (bench/onset-latency.bench.ts
 * --jitter-frames 2: with no bound, echo-only calls then had onsets; bounded, none. So had a canceller output a frame
 * earlier with this window not moved with it, one frame older than the echo's source).
 */
const MAX_DROP = 0.1;
/** A frame must be this far above the line's noise (power ratio, 10 dB) to pass. */
const NOISE_MARGIN = 10;
/**
 * The line's noise the double-talk tests weigh a frame against is the quietest frame the echo cannot
 * account for (line-noise.ts) where the caller-channel frame stands this far (power ratio, 3 dB) over the
 * echo the reference predicts in it: from NEWER_FRAMES newer than the echo's delay to ECHO_OLDER_FRAMES
 * older (6: a room's reverberation, a delay that slipped), at the measured return, each frame more than
 * one older than the delay counted ECHO_DECAY (2 dB) less per frame further back (a room's tail decays:
 * counted whole, a caller's syllable with no echo on the line stood under the reference six frames back and
 * fell to the other bar; decayed, the larger grid missed 4 of 192, not 13). Elsewhere the quietest
 * frame of all. Without this condition, with the reference drifting (`--jitter-frames 2`), a filter that
 * lost the echo left it 1-6 dB under its input, 0.25-0.3 explained, in an answer's quiet part and its
 * pause, and the double-talk tests passed it: 9 echo-only answers cut on the 7 drifting seeds traced (none
 * before); with it, none on seeds 1-20 (docs/performance.md).
 */
const OVER_ECHO = 2;
const ECHO_OLDER_FRAMES = 6;
const ECHO_DECAY = 10 ** (-2 / 10);
/** Reference frames either side of the delay whose echo makes a caller-channel frame the echo's (LineNoise). */
const NOISE_ECHO_FRAMES = 1;
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
  #closed = false;
  /** The current measurement window: reference and caller power summed, frames, and whether it may count. */
  #window = { reference: 0, caller: 0, frames: 0, steady: true };
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
  /** The echo's delay in frames, once the envelopes agree on one (tests, metrics). */
  delayFrames: number | undefined;
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
    this.#doubleTalk = new DoubleTalk(sampleRate, options.residualVad, WINDOW_FRAMES, WINDOWS, {
      explained: () => this.#explainedNow(),
      filterFindsEcho: () => this.#filterFindsEcho(),
    });
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
      this.#frameIn(meanSquare(played, at, end), meanSquare(mic, at, end));
    }
    const out = this.#canceller.process(mic);
    // Nothing played within the tail: no echo to bar (the loudest of the tail, found without a copy per call).
    if (this.#loudestReference(0, this.#tailFrames - 1) === 0) {
      this.#doubleTalk.idle();
      this.#words?.idle();
      return out;
    }
    this.#doubleTalk.live();
    const echo = this.#expectedReference() * this.echoReturn;
    const noiseBar = this.noise * NOISE_MARGIN;
    const echoFreeBar = this.#lineNoise.echoFree * NOISE_MARGIN;
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
      const input = this.#callers[this.#callers.length - outFrames + at / this.#frame - this.#lagFrames] ?? 0;
      weighed.at = at;
      weighed.end = end;
      this.#doubleTalk.observe(out.subarray(at, end), level, input, noiseBar);
      if (level >= Math.max(echo, noiseBar)) {
        this.#words?.frame(out.subarray(at, end), false);
        continue;
      }
      this.#doubleTalk.underBar();
      const bar =
        echoFreeBar < noiseBar && this.#overEcho(input, outFrames - 1 - at / this.#frame)
          ? echoFreeBar
          : noiseBar;
      if (level >= bar && this.#doubleTalk.caller(level, input, bar)) {
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
   * Whether the caller-channel frame `newer` frames before the newest stands OVER_ECHO over the echo the
   * reference predicts in it (false until the delay and the return are measured).
   */
  #overEcho(input: number, newer: number): boolean {
    const d = this.delayFrames;
    if (d === undefined || this.#returns.length === 0) return false;
    const source = d + this.#lagFrames + newer;
    const loudest = this.#loudestReference(source - NEWER_FRAMES, source + ECHO_OLDER_FRAMES, source + 1);
    return input >= loudest * this.#lowestReturn * OVER_ECHO;
  }

  /**
   * Whether the filter's own estimate of the echo in the frame being weighed (caller channel minus output)
   * accounts for all the echo the line returns from the reference frame at the echo's delay (the measured
   * return): a filter at work on this very frame, so what it leaves is not echo it missed. A filter barely
   * converged or misadapted by a slip, the case MAX_KEPT is for, finds far less: taking 0.5-1.7 dB off an echo
   * it is aligned with, its estimate is 15-24 dB under that echo (by arithmetic: 6-18% of its amplitude).
   */
  #filterFindsEcho(): boolean {
    const d = this.delayFrames;
    const w = this.#weighed;
    if (!w.aligned || d === undefined || this.#returns.length === 0) return false;
    const expected =
      this.#loudestReference(d + this.#lagFrames, d + this.#lagFrames) * Math.min(1, this.#lowestReturn);
    return expected > 0 && differenceSquare(w.mic, w.out, w.at, w.end) >= expected;
  }

  /** #explained when the canceller can tell, else undefined. */
  #explainedNow(): number | undefined {
    const explainedWithin = this.#canceller.explainedWithin;
    return explainedWithin ? this.#explained(explainedWithin) : undefined;
  }

  /** The largest fraction of the last output frame the reference explains around the echo's delay (or in the whole tail). */
  #explained(explainedWithin: NonNullable<EchoCancellerPort["explainedWithin"]>): number {
    const d = this.delayFrames;
    const lag = this.#lagFrames;
    return d === undefined
      ? explainedWithin.call(this.#canceller, lag, this.#tailFrames + lag)
      : explainedWithin.call(this.#canceller, d + lag - NEWER_FRAMES, d + lag + OLDER_FRAMES);
  }

  /** The call so far, for its summary (EchoStats). */
  stats(): EchoStats {
    const stats: EchoStats = {
      frames: this.framesUnderEcho,
      suppressedFrames: this.suppressedFrames,
      doubleTalkFrames: this.doubleTalkFrames,
    };
    if (this.#returns.length > 0) {
      const lowest = this.#lowestReturn;
      // An echo-free line measures no return at all (a ratio of 0): no finite loss to report.
      if (lowest > 0) stats.echoReturnLossDb = Math.round(-10 * Math.log10(lowest) * 10) / 10;
    }
    if (this.delayFrames !== undefined) stats.delayMs = this.delayFrames * 20;
    return stats;
  }

  /** The line's echo return as a power ratio (caller / reference): measured, else ECHO_RETURN_LOSS_DB. */
  get echoReturn(): number {
    if (this.#returns.length === 0) return 10 ** (-ECHO_RETURN_LOSS_DB / 10);
    return Math.min(1, this.#lowestReturn * 10 ** (HEADROOM_DB / 10));
  }

  /** The line's noise (mean square): the quietest frame of the caller channel, as received, over the last second. */
  get noise(): number {
    return this.#lineNoise.noise;
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
    this.#sinceCaller = 0;
  }

  /** One frame's reference and caller levels: the line's noise, the echo return's windows, the tail, the delay's envelopes. */
  #frameIn(reference: number, caller: number): void {
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
   * A window counts only when none of its frames is within a mirror's lead of audio coming back after a
   * silence as long as the tail and that lead (an answer's start, a resume after a hold): there the
   * reference may have run ahead of the line, with no echo of it in the caller channel yet; the return
   * read far too small, the bar fell with it and the echo went through as the caller (an answer nobody
   * spoke over cut itself in a starved process, its mirror 15 frames ahead). Shorter pauses (espeak-ng's
   * digital silence between words) keep a window: barred by every quiet frame and the tail after it
   * (ad736b4), too few were measured, and with the reference drifting +-2 frames an answer at a 3 dB echo
   * return cut itself 61 times per 10 minutes under the 6 dB assumed; with this rule 1.6, as before
   * ad736b4 (bench/onset-latency.bench.ts --grid --jitter-frames 2, docs/performance.md).
   */
  #measure(reference: number, caller: number): void {
    const w = this.#window;
    w.reference += reference;
    w.caller += caller;
    if (this.#sinceResume <= LEAD_FRAMES) w.steady = false;
    if (++w.frames < WINDOW_FRAMES) return;
    if (w.steady && w.reference / w.frames >= MIN_WINDOW_REFERENCE) {
      this.#returns.push(w.caller / w.reference);
      if (this.#returns.length > WINDOWS) this.#returns.shift();
      this.#lowestReturn = Math.min(...this.#returns);
    }
    this.#window = { reference: 0, caller: 0, frames: 0, steady: true };
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
