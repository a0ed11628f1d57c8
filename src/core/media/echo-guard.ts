/**
 * Echo cancellation on a media leg's caller audio, before the speech gate and
 * STT: on a speakerphone or a leaky line the caller's channel carries the
 * assistant's own voice back, and without this the gate hears it as speech
 * and the answer interrupts itself.
 *
 * Core names no DSP: the composition root injects an `EchoCancellerFactory`
 * (the codecs' libspeexdsp canceller), the adapter hands the leg, with each
 * piece of caller audio, the assistant audio that was played into the line
 * over the same span (a phone playout mirrors the carrier's buffer: what it
 * sent, consumed in step with the caller's frames, dropped on clear). One
 * canceller per leg, created when the leg starts, closed with it.
 *
 * What survives: the adaptive filter needs seconds to converge (about 10 dB
 * of echo removed in the first two, 25 dB after four, on espeak-ng answers)
 * and a live line's delay jitters, so a residual stays that the gate's
 * -45 dBFS floor hears. A 20 ms frame of the canceller's output quieter than
 * the echo the line returns of the loudest reference frame within the tail
 * cannot be the caller: it is attenuated by 30 dB before the gate and STT.
 * The line's echo return is measured (the lowest caller-to-reference power
 * ratio of the last five 1 s windows with audio played: an echo-only window
 * gives the echo return, a window with the caller talking only a higher
 * ratio, plus 3 dB for a line response's peaks and the windows' misalignment)
 * and assumed 6 dB (a Geigel double-talk test) until measured, so a
 * caller on a handset (little echo) is held to the assistant's level only for
 * the first second of the first answer. Caller speech above it passes whole,
 * and must then last `minSpeechMs` at the gate to interrupt (BargeInPolicy
 * decides whether it does).
 */
import { TalkError } from "../errors.js";

/** One canceller's state (per leg). */
export interface EchoCancellerPort {
  /** Assistant audio as it is played into the line (16-bit PCM at the leg's rate). */
  played(pcm: Int16Array): void;
  /** Caller audio; returns the whole frames completed so far with the echo removed. */
  process(mic: Int16Array): Int16Array;
  /** Frees the state. Idempotent. */
  close(): void;
}

export type EchoCancellerFactory = (options: {
  sampleRate: number;
  tailMs: number;
  denoise: boolean;
}) => EchoCancellerPort;

/** talk.input.echoCancellation. */
export interface EchoCancellationOptions {
  /** Cancel on legs whose adapter supplies the played reference (phone calls). Default true. */
  enabled?: boolean;
  /** Longest echo path covered (line delay + response), ms, 20-1000. Default 300. */
  tailMs?: number;
  /** Also suppress stationary noise. Default false. */
  denoise?: boolean;
}

export type ResolvedEchoCancellation = Readonly<Required<EchoCancellationOptions>>;

/** Validates talk.input.echoCancellation (config_invalid naming the key); defaults filled in. */
export function resolveEchoCancellation(
  options: EchoCancellationOptions = {},
  key = "talk.input.echoCancellation",
): ResolvedEchoCancellation {
  const { enabled = true, tailMs = 300, denoise = false } = options;
  if (typeof enabled !== "boolean")
    throw new TalkError("config_invalid", `${key}.enabled must be true or false.`);
  if (typeof denoise !== "boolean")
    throw new TalkError("config_invalid", `${key}.denoise must be true or false.`);
  if (typeof tailMs !== "number" || !Number.isInteger(tailMs) || tailMs < 20 || tailMs > 1000)
    throw new TalkError("config_invalid", `${key}.tailMs must be an integer from 20 to 1000, got ${tailMs}.`);
  return Object.freeze({ enabled, tailMs, denoise });
}

/** The echo return assumed until measured: a frame louder than the reference minus this may be the caller, dB. */
export const ECHO_RETURN_LOSS_DB = 6;
/** Headroom over the measured echo return: a line response's peaks and a window's misalignment, dB. */
const HEADROOM_DB = 3;
/** Frames (20 ms) per window of the echo return measurement, and windows kept. */
const WINDOW_FRAMES = 50;
const WINDOWS = 5;
/** A window counts only when the reference was at least this loud (mean square, about -50 dBFS). */
const MIN_WINDOW_REFERENCE = 32768 ** 2 * 1e-5;
/** Attenuation of a frame that can only be residual echo. */
const RESIDUAL_GAIN = 10 ** (-30 / 20);

/** The leg's canceller: caller audio in, caller audio minus the played reference out. */
export class EchoGuard {
  readonly #canceller: EchoCancellerPort;
  /** Samples per 20 ms, the unit levels are taken over. */
  readonly #frame: number;
  /** Levels (mean square) of the reference frames of the last `tailMs`, newest last. */
  readonly #tail: number[] = [];
  readonly #tailFrames: number;
  #closed = false;
  /** The current measurement window: reference and caller power summed, frames. */
  #window = { reference: 0, caller: 0, frames: 0 };
  /** Caller-to-reference power ratios of the last windows with audio played. */
  readonly #returns: number[] = [];
  /** Frames attenuated as residual echo (tests, metrics). */
  suppressedFrames = 0;

  constructor(create: EchoCancellerFactory, options: ResolvedEchoCancellation, sampleRate: number) {
    this.#canceller = create({ sampleRate, tailMs: options.tailMs, denoise: options.denoise });
    this.#frame = sampleRate / 50;
    this.#tailFrames = Math.max(1, Math.ceil(options.tailMs / 20));
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
      const level = meanSquare(played, at, end);
      this.#measure(level, meanSquare(mic, at, end));
      this.#tail.push(level);
      if (this.#tail.length > this.#tailFrames) this.#tail.shift();
    }
    const out = this.#canceller.process(mic);
    const loudest = Math.max(0, ...this.#tail);
    if (loudest === 0) return out;
    const floor = loudest * this.echoReturn;
    for (let at = 0; at < out.length; at += this.#frame) {
      const end = Math.min(out.length, at + this.#frame);
      if (meanSquare(out, at, end) >= floor) continue;
      this.suppressedFrames++;
      for (let i = at; i < end; i++) out[i] = Math.round(out[i]! * RESIDUAL_GAIN);
    }
    return out;
  }

  /** The line's echo return as a power ratio (caller / reference): measured, else -6 dB. */
  get echoReturn(): number {
    if (this.#returns.length === 0) return 10 ** (-ECHO_RETURN_LOSS_DB / 10);
    return Math.min(1, Math.min(...this.#returns) * 10 ** (HEADROOM_DB / 10));
  }

  #measure(reference: number, caller: number): void {
    const w = this.#window;
    w.reference += reference;
    w.caller += caller;
    if (++w.frames < WINDOW_FRAMES) return;
    if (w.reference / w.frames >= MIN_WINDOW_REFERENCE) {
      this.#returns.push(w.caller / w.reference);
      if (this.#returns.length > WINDOWS) this.#returns.shift();
    }
    this.#window = { reference: 0, caller: 0, frames: 0 };
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#canceller.close();
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
