/**
 * Voice activity detection for barge-in and turn segmentation.
 *
 * Two detectors must agree on every 10 ms sub-frame: the WebRTC VAD (libfvad,
 * a GMM over six sub-band energies) says whether the spectrum looks like
 * speech, and an energy gate says whether the frame stands clear of the
 * noise floor, tracked per stream (fast to fall, slow to rise). The WebRTC
 * VAD alone fires on hum and steady noise at telephone levels; the gate alone
 * fires on any loud sound. Chosen by measurement over the WebRTC VAD alone
 * (docs/performance.md): onsets on real recordings within 100 ms and no
 * trigger over 10 minutes of noise, hum and silence.
 *
 * A start is declared once speech outweighs non-speech over `onsetMs` (on a
 * quiet line a gap weighs a quarter: QUIET_GAP_WEIGHT); an end once
 * `hangoverMs` passes without speech.
 */
import { CodecError } from "./codec-error.js";
import { fvad } from "./fvad-module.js";

export type VadEvent = "silence" | "speech-start" | "speech" | "speech-end";

export interface VadOptions {
  /** Input rate in Hz: 8000, 16000, 32000 or 48000 (the rates the WebRTC VAD models). Required. */
  sampleRate: number;
  /** WebRTC VAD aggressiveness 0..3 (3 rejects most non-speech). Default 3. */
  mode?: number;
  /** Speech must dominate this long before speech-start fires, in ms (multiple of 10). Default 30. */
  onsetMs?: number;
  /** Non-speech must last this long before speech-end fires, in ms (multiple of 10). Default 500. */
  hangoverMs?: number;
  /** A sub-frame counts as speech only this far above the tracked noise floor, in dB. Default 15. */
  minSnrDb?: number;
  /** ...and only above this absolute level, in dBFS. Default -55. */
  minLevelDbfs?: number;
}

export interface Vad {
  readonly sampleRate: number;
  /** Whether the stream is inside a speech segment (after speech-start, before speech-end). */
  readonly speaking: boolean;
  /** Smoothed share of recent 10 ms sub-frames judged speech, 0..1. */
  readonly probability: number;
  /**
   * The last frame fed held speech by the detector's own per-frame rule: what counts toward an onset and
   * restarts the hangover inside a segment (a frame of silence inside speech is not voiced).
   */
  readonly voiced: boolean;
  /** Tracked noise floor in dBFS. */
  readonly noiseFloorDbfs: number;
  /**
   * Feeds a frame whose length is a multiple of 10 ms (10, 20, 30, 40 ms ...).
   * Returns what the frame did: a transition, or the current state.
   */
  process(frame: Int16Array): VadEvent;
  /** Forgets the stream (noise floor, state). */
  reset(): void;
  /** Frees the wasm memory. Idempotent; process() afterwards throws invalid_state. */
  close(): void;
}

const DEFAULTS = Object.freeze({ mode: 3, onsetMs: 30, hangoverMs: 500, minSnrDb: 15, minLevelDbfs: -55 });
const VAD_RATES = [8000, 16000, 32000, 48000];
/**
 * The noise floor is the quietest 10 ms sub-frame of the last second
 * (minimum statistics, in ten 100 ms blocks): speech always has gaps that
 * short, so speech does not lift it, while a noise that switches on is
 * learnt within a second.
 */
const FLOOR_BLOCKS = 10;
const FLOOR_BLOCK_FRAMES = 10;
/**
 * ...except that a level that has stayed within STEADY_RANGE_DB for
 * STEADY_FRAMES sub-frames is noise now: stationary noise that switches on
 * (comfort noise after digital silence) is learnt in 250 ms, and speech,
 * which is never that steady for that long, is not.
 */
const STEADY_FRAMES = 25;
const DIGITAL_SILENCE_DBFS = -90;
const STEADY_RANGE_DB = 3;
/**
 * Before an onset, a sub-frame that is not speech takes QUIET_GAP_WEIGHT off the onset score where the noise
 * floor is under QUIET_FLOOR_DBFS, not a whole point. A floor that low is a quiet line, or the caller's
 * channel under a quiet echo, where the echo guard holds the echo's frames 30 dB under what the canceller left
 * (media/echo-guard.ts, RESIDUAL_GAIN; the floor ignores digital silence). There a gap is the caller's voice
 * dipping under the level floor between syllables, or a frame the guard held while the caller talked over the
 * answer, not noise that looks like speech now and then: a caller at -42..-45 dBFS (P.56) over the echo never
 * held speech for 120 ms at a whole point a gap, and was heard a syllable or a word later, or not at all.
 * Measured on issue 40's talker-to-echo grid (bench/onset-latency.bench.ts --grid --seeds 1,2 --per-cell 4
 * --echo-minutes 10 --answer-start-ms 400,800,1200,1600): where TER >= -6 dB, missed 19 -> 8 of 768, P.56
 * onset -> clear p95 501 -> 464 ms, no echo-only answer cut in 42.6 min; drifting seeds 1-20 (--jitter-frames
 * 2) missed 46 -> 38 of 240, no cut. Half a point: missed 16. A tenth: missed 3, but more onsets on the
 * corpus's noisy echo (9 -> 13, --seeds 1,2,3,4) and under RNNoise in babble (bench/vad.bench.ts). A floor of
 * -60 dBFS took in the speexdsp suppressor's output under babble (false starts at 20 dB SNR 8 -> 14 a minute);
 * at -70 dBFS no noise of that bench starts more turns. docs/performance.md has the rest.
 */
const QUIET_FLOOR_DBFS = -70;
const QUIET_GAP_WEIGHT = 0.25;

function checkMs(name: string, v: unknown, max: number): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < 10 || v > max || v % 10 !== 0) {
    throw new CodecError(
      "invalid_options",
      `${name} must be a multiple of 10 ms between 10 and ${max}, got ${String(v)}`,
    );
  }
  return v;
}

function checkNumber(name: string, v: unknown, min: number, max: number): number {
  if (typeof v !== "number" || !Number.isFinite(v) || v < min || v > max) {
    throw new CodecError("invalid_options", `${name} must be a number ${min}..${max}, got ${String(v)}`);
  }
  return v;
}

const leakGuard = new FinalizationRegistry<[number, number]>(([inst, buf]) => {
  fvad._fvad_free(inst);
  fvad._free(buf);
});

export function createVad(options: VadOptions): Vad {
  if (options === null || typeof options !== "object")
    throw new CodecError("invalid_options", "createVad needs { sampleRate }");
  const o = { ...DEFAULTS };
  for (const [k, v] of Object.entries(options)) if (v !== undefined) (o as Record<string, unknown>)[k] = v;
  const rate = options.sampleRate;
  if (typeof rate !== "number" || !VAD_RATES.includes(rate)) {
    throw new CodecError(
      "unsupported_rate",
      `VAD sampleRate must be one of ${VAD_RATES.join(", ")} Hz, got ${String(rate)}`,
    );
  }
  if (![0, 1, 2, 3].includes(o.mode))
    throw new CodecError("invalid_options", `mode must be 0..3, got ${String(o.mode)}`);
  checkMs("onsetMs", o.onsetMs, 1000);
  checkMs("hangoverMs", o.hangoverMs, 10_000);
  checkNumber("minSnrDb", o.minSnrDb, 0, 60);
  checkNumber("minLevelDbfs", o.minLevelDbfs, -120, 0);
  return new WebRtcGatedVad(rate, o);
}

class WebRtcGatedVad implements Vad {
  readonly sampleRate: number;
  #inst: number;
  #buf: number;
  #sub: number; // samples per 10 ms
  #onsetFrames: number;
  #hangoverFrames: number;
  #minSnrDb: number;
  #minLevelDbfs: number;
  #speaking = false;
  #score = 0;
  #silentFor = 0;
  #probability = 0;
  #voiced = false;
  #floor = Number.NaN;
  #blockMins = new Float64Array(FLOOR_BLOCKS).fill(Number.POSITIVE_INFINITY);
  #blockMin = Number.POSITIVE_INFINITY;
  #blockFill = 0;
  #block = 0;
  #recent = new Float64Array(STEADY_FRAMES);
  #recentCount = 0;
  #closed = false;

  constructor(rate: number, o: typeof DEFAULTS) {
    this.sampleRate = rate;
    this.#sub = rate / 100;
    this.#onsetFrames = o.onsetMs / 10;
    this.#hangoverFrames = o.hangoverMs / 10;
    this.#minSnrDb = o.minSnrDb;
    this.#minLevelDbfs = o.minLevelDbfs;
    this.#inst = fvad._fvad_new();
    this.#buf = fvad._malloc(this.#sub * 2);
    if (!this.#inst || !this.#buf) throw new CodecError("codec_unavailable", "fvad_new failed");
    if (fvad._fvad_set_sample_rate(this.#inst, rate) !== 0 || fvad._fvad_set_mode(this.#inst, o.mode) !== 0) {
      this.#free();
      throw new CodecError("codec_unavailable", "libfvad refused the rate or mode");
    }
    leakGuard.register(this, [this.#inst, this.#buf], this);
  }

  get speaking(): boolean {
    return this.#speaking;
  }

  get probability(): number {
    return this.#probability;
  }

  get voiced(): boolean {
    return this.#voiced;
  }

  get noiseFloorDbfs(): number {
    return this.#floor;
  }

  process(frame: Int16Array): VadEvent {
    if (this.#closed) throw new CodecError("invalid_state", "the VAD is closed");
    if (!(frame instanceof Int16Array) || frame.length === 0 || frame.length % this.#sub !== 0) {
      throw new CodecError(
        "invalid_audio",
        `a VAD frame at ${this.sampleRate} Hz must be a non-empty multiple of ${this.#sub} samples (10 ms), got ${frame instanceof Int16Array ? frame.length : typeof frame}`,
      );
    }
    let event: VadEvent | undefined;
    this.#voiced = false;
    for (let o = 0; o < frame.length; o += this.#sub) {
      const e = this.#step(frame.subarray(o, o + this.#sub));
      if (e !== undefined && event === undefined) event = e;
    }
    return event ?? (this.#speaking ? "speech" : "silence");
  }

  reset(): void {
    if (this.#closed) return;
    fvad._fvad_reset(this.#inst);
    this.#speaking = false;
    this.#score = 0;
    this.#silentFor = 0;
    this.#probability = 0;
    this.#voiced = false;
    this.#floor = Number.NaN;
    this.#blockMins.fill(Number.POSITIVE_INFINITY);
    this.#blockMin = Number.POSITIVE_INFINITY;
    this.#blockFill = 0;
    this.#block = 0;
    this.#recentCount = 0;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    leakGuard.unregister(this);
    this.#free();
  }

  #free(): void {
    if (this.#inst) fvad._fvad_free(this.#inst);
    if (this.#buf) fvad._free(this.#buf);
    this.#inst = this.#buf = 0;
  }

  #trackFloor(level: number): void {
    // Digital silence (muted line, DTX gaps) is the absence of a signal, not a noise floor:
    // learning it would make the first frames of comfort noise after it look like speech.
    if (level < DIGITAL_SILENCE_DBFS) return;
    if (level < this.#blockMin) this.#blockMin = level;
    if (++this.#blockFill === FLOOR_BLOCK_FRAMES) {
      this.#blockMins[this.#block] = this.#blockMin;
      this.#block = (this.#block + 1) % FLOOR_BLOCKS;
      this.#blockMin = Number.POSITIVE_INFINITY;
      this.#blockFill = 0;
    }
    let floor = this.#blockMin;
    for (let i = 0; i < FLOOR_BLOCKS; i++) if (this.#blockMins[i]! < floor) floor = this.#blockMins[i]!;
    this.#recent[this.#recentCount++ % STEADY_FRAMES] = level;
    if (this.#recentCount >= STEADY_FRAMES) {
      let lo = Number.POSITIVE_INFINITY;
      let hi = Number.NEGATIVE_INFINITY;
      for (let i = 0; i < STEADY_FRAMES; i++) {
        lo = Math.min(lo, this.#recent[i]!);
        hi = Math.max(hi, this.#recent[i]!);
      }
      if (hi - lo <= STEADY_RANGE_DB && lo > floor) {
        floor = lo;
        // Restart the minimum statistics from the new floor so it does not fall back to the old one.
        this.#blockMins.fill(lo);
        this.#blockMin = lo;
      }
    }
    this.#floor = floor;
  }

  #step(sub: Int16Array): VadEvent | undefined {
    let energy = 0;
    for (let i = 0; i < sub.length; i++) energy += sub[i]! * sub[i]!;
    const level = 10 * Math.log10(energy / sub.length / (32768 * 32768) + 1e-12);
    this.#trackFloor(level);
    const loud = level >= this.#minLevelDbfs && level >= this.#floor + this.#minSnrDb;

    // The WebRTC VAD runs on every sub-frame, gated or not, so its own noise model keeps adapting.
    fvad.HEAP16.set(sub, this.#buf >> 1);
    const speech = fvad._fvad_process(this.#inst, this.#buf, sub.length) === 1 && loud;
    this.#probability += ((speech ? 1 : 0) - this.#probability) * 0.2;
    if (speech) this.#voiced = true;

    if (!this.#speaking) {
      const gap = this.#floor < QUIET_FLOOR_DBFS ? QUIET_GAP_WEIGHT : 1;
      this.#score = speech ? this.#score + 1 : Math.max(0, this.#score - gap);
      if (this.#score >= this.#onsetFrames) {
        this.#speaking = true;
        this.#silentFor = 0;
        return "speech-start";
      }
      return undefined;
    }
    this.#silentFor = speech ? 0 : this.#silentFor + 1;
    if (this.#silentFor >= this.#hangoverFrames) {
      this.#speaking = false;
      this.#score = 0;
      return "speech-end";
    }
    return undefined;
  }
}
