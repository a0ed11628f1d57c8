/**
 * Echo cancellation with our own output as the reference: the caller's audio
 * minus what the assistant played into the line, before VAD and STT.
 *
 * The DSP is libspeexdsp's (Debian's package, through a small N-API binding
 * in native/speexdsp built by scripts/setup.sh): its MDF adaptive filter
 * removes the linear echo within `tailMs` of the reference; with `denoise`,
 * its preprocessor also suppresses stationary noise and the residual echo
 * (and delays the output by one frame, its overlap-add). Without `denoise`
 * the preprocessor is not run: it would apply no gain at all (libspeexdsp
 * sets every band's gain to 1 when denoise is off, residual echo
 * suppression included), only that frame of delay; the echo guard
 * (voice/media/echo-guard.ts) bars the residual echo instead. Why Speex over webrtc-audio-processing: a C API of five calls (no
 * C++ ABI to bind), telephony rates natively, and its cost is measured in
 * bench/codecs.bench.ts.
 *
 * Alignment: the leg calls `played(pcm)` with each piece of assistant audio
 * when it is played into the line, and `process(mic)` with each piece of
 * caller audio as received. Both run on the line's clock, so the reference
 * is consumed frame by frame in step with the caller's frames; the line's
 * round-trip delay (20-250 ms on phones) is absorbed by the filter's tail,
 * which therefore covers the longest echo delay expected plus the room or
 * line response. Reference audio the caller's frames never caught up with is
 * dropped beyond `tailMs` (a stalled inbound stream must not make the
 * canceller work on stale audio).
 */
import { CodecError } from "./codec-error.js";
import { EchoCoherence } from "./echo-coherence.js";
import { speexdspAvailable, speexdspBinding } from "./speexdsp-binding.js";

/** Whether the native echo canceller can be created here. */
export function echoCancellerAvailable(): boolean {
  return speexdspAvailable();
}

export interface EchoCancellerOptions {
  /** 8000 or 16000 (the line rates); any rate 8000-48000 works. */
  sampleRate: number;
  /** Frame the filter works on, ms. Default 20 (the line's frame). */
  frameMs?: number;
  /** Longest echo path covered (line delay + response), ms. Default 300 (20-250 ms phone delays). */
  tailMs?: number;
  /** Also suppress stationary noise. Default false. */
  denoise?: boolean;
  /**
   * Also measure how much of each output frame the reference explains (codecs/echo-coherence.ts), for a
   * double-talk test: `explainedWithin`, `explainedBeyondChanceWithin`. 20 ms frames only. Default false.
   */
  doubleTalk?: boolean;
}

export interface EchoCanceller {
  readonly sampleRate: number;
  readonly frameSamples: number;
  /** How far the output lags the caller audio it comes from, ms: a frame with `denoise`, else 0. */
  readonly outputLagMs: number;
  /** Assistant audio as it is played into the line (16-bit PCM at sampleRate). */
  played(pcm: Int16Array): void;
  /** Caller audio as received; returns the whole frames completed so far with the echo removed (a partial frame waits for the next call). */
  process(mic: Int16Array): Int16Array;
  /**
   * With `doubleTalk`: the largest fraction (0-1) of the last output frame's power that the reference
   * explains at a delay of `from`..`to` frames (the output frame against the reference played that many
   * frames before its caller frame). 0 before any reference. Absent without `doubleTalk`.
   */
  explainedWithin?(from: number, to: number): number;
  /**
   * With `doubleTalk`: as explainedWithin, less what the reference would explain of an unrelated output by
   * chance over the frames measured (echo-coherence.ts). Absent without `doubleTalk`.
   */
  explainedBeyondChanceWithin?(from: number, to: number): number;
  /** Frees the native state. Idempotent; process/played after close throw invalid_state. */
  close(): void;
}

export function createEchoCanceller(options: EchoCancellerOptions): EchoCanceller {
  const { sampleRate } = options;
  const frameMs = options.frameMs ?? 20;
  const tailMs = options.tailMs ?? 300;
  if (!Number.isInteger(sampleRate) || sampleRate < 8000 || sampleRate > 48_000 || sampleRate % 100 !== 0)
    throw new CodecError(
      "invalid_options",
      `sampleRate must be a multiple of 100 from 8000 to 48000 (whole 10 ms frames), got ${sampleRate}`,
    );
  if (![10, 20].includes(frameMs))
    throw new CodecError("invalid_options", `frameMs must be 10 or 20, got ${frameMs}`);
  if (!Number.isFinite(tailMs) || tailMs < frameMs || tailMs > 1000)
    throw new CodecError("invalid_options", `tailMs must be ${frameMs}-1000, got ${tailMs}`);
  if (options.doubleTalk === true && frameMs !== 20)
    throw new CodecError("invalid_options", `doubleTalk needs 20 ms frames, got frameMs ${frameMs}`);
  const frame = (sampleRate * frameMs) / 1000;
  // Lags the guard asks about: the tail, two frames either side of a delay estimate, and denoise's frame.
  const coherence =
    options.doubleTalk === true
      ? new EchoCoherence({ sampleRate, maxLagFrames: Math.ceil(tailMs / frameMs) + 5 })
      : undefined;
  const native = new (speexdspBinding().EchoCanceller)(
    frame,
    Math.round((sampleRate * tailMs) / 1000),
    sampleRate,
    options.denoise ?? false,
  );
  const maxReference = Math.round((sampleRate * tailMs) / 1000) + frame;
  let reference: Int16Array = new Int16Array(0);
  // Caller samples not yet making a whole frame, carried to the next call.
  let pending: Int16Array = new Int16Array(0);
  const mic = new Int16Array(frame);
  const ref = new Int16Array(frame);
  const out = new Int16Array(frame);
  let closed = false;

  const check = (): void => {
    if (closed) throw new CodecError("invalid_state", "the echo canceller is closed");
  };
  const concat = (a: Int16Array, b: Int16Array): Int16Array => {
    if (a.length === 0) return b.slice();
    const joined = new Int16Array(a.length + b.length);
    joined.set(a);
    joined.set(b, a.length);
    return joined;
  };

  return {
    sampleRate,
    frameSamples: frame,
    outputLagMs: options.denoise === true ? frameMs : 0,
    played(pcm) {
      check();
      reference = concat(reference, pcm);
      if (reference.length > maxReference) reference = reference.slice(reference.length - maxReference);
    },
    process(input) {
      check();
      const all = concat(pending, input);
      const whole = all.length - (all.length % frame);
      const result = new Int16Array(whole);
      for (let at = 0; at < whole; at += frame) {
        mic.set(all.subarray(at, at + frame));
        const take = Math.min(frame, reference.length);
        ref.fill(0);
        ref.set(reference.subarray(0, take));
        reference = reference.subarray(take);
        native.process(mic, ref, out);
        coherence?.frame(ref, out);
        result.set(out, at);
      }
      pending = all.slice(whole);
      return result;
    },
    ...(coherence
      ? {
          explainedWithin: (from: number, to: number) => coherence.explainedWithin(from, to),
          explainedBeyondChanceWithin: (from: number, to: number) =>
            coherence.explainedBeyondChanceWithin(from, to),
        }
      : {}),
    close() {
      if (closed) return;
      closed = true;
      native.close();
    },
  };
}
