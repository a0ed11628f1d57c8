/**
 * Noise suppression on its own: libspeexdsp's preprocessor (a spectral
 * suppressor with a noise estimate tracked per stream) without the echo
 * canceller, before VAD and STT. The echo canceller's `denoise` runs the same
 * preprocessor on its output; this is for legs without a played reference
 * (or with echo cancellation off). Per-stream state, one idempotent close.
 *
 * RNNoise (rnnoise-suppressor.ts) is the other engine behind the same
 * interface (talk.input.noiseSuppression.engine). This one is the default by
 * cost: about 20 µs per 20 ms frame against RNNoise's 1 ms (it works at
 * 48 kHz only, so a phone leg pays two resamplings); RNNoise leaves the
 * local recognizer fewer word errors. Both measured in bench/vad.bench.ts
 * (docs/performance.md).
 */
import { CodecError } from "./codec-error.js";
import { speexdspAvailable, speexdspBinding } from "./speexdsp-binding.js";

export interface NoiseSuppressorOptions {
  /** 8000-48000, whole 10 ms frames. Required. */
  sampleRate: number;
  /** Frame the suppressor works on, ms: 10 or 20. Default 20 (the line's frame). */
  frameMs?: number;
  /** Most attenuation applied to noise, dB (negative), -90..-1. Default -30 (speexdsp's own is -15). */
  suppressDb?: number;
}

export interface NoiseSuppressor {
  readonly sampleRate: number;
  readonly frameSamples: number;
  /** Returns the whole frames completed so far, denoised (a partial frame waits for the next call). */
  process(pcm: Int16Array): Int16Array;
  /** Frees the native state. Idempotent; process() afterwards throws invalid_state. */
  close(): void;
}

/** Whether the native suppressor can be created here. */
export function noiseSuppressorAvailable(): boolean {
  return speexdspAvailable();
}

export function createNoiseSuppressor(options: NoiseSuppressorOptions): NoiseSuppressor {
  const { sampleRate } = options;
  const frameMs = options.frameMs ?? 20;
  const suppressDb = options.suppressDb ?? -30;
  if (!Number.isInteger(sampleRate) || sampleRate < 8000 || sampleRate > 48_000 || sampleRate % 100 !== 0)
    throw new CodecError(
      "invalid_options",
      `sampleRate must be a multiple of 100 from 8000 to 48000 (whole 10 ms frames), got ${sampleRate}`,
    );
  if (![10, 20].includes(frameMs))
    throw new CodecError("invalid_options", `frameMs must be 10 or 20, got ${frameMs}`);
  if (!Number.isInteger(suppressDb) || suppressDb < -90 || suppressDb > -1)
    throw new CodecError(
      "invalid_options",
      `suppressDb must be an integer from -90 to -1, got ${suppressDb}`,
    );
  const frame = (sampleRate * frameMs) / 1000;
  const native = new (speexdspBinding().NoiseSuppressor)(frame, sampleRate, suppressDb);
  const work = new Int16Array(frame);
  let pending: Int16Array = new Int16Array(0);
  let closed = false;
  return {
    sampleRate,
    frameSamples: frame,
    process(input) {
      if (closed) throw new CodecError("invalid_state", "the noise suppressor is closed");
      if (!(input instanceof Int16Array))
        throw new CodecError("invalid_audio", "process() takes an Int16Array");
      let all = input;
      if (pending.length > 0) {
        all = new Int16Array(pending.length + input.length);
        all.set(pending);
        all.set(input, pending.length);
      }
      const whole = all.length - (all.length % frame);
      const out = new Int16Array(whole);
      for (let at = 0; at < whole; at += frame) {
        work.set(all.subarray(at, at + frame));
        native.process(work);
        out.set(work, at);
      }
      pending = all.slice(whole);
      return out;
    },
    close() {
      if (closed) return;
      closed = true;
      native.close();
    },
  };
}
