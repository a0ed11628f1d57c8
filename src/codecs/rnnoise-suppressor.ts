/**
 * Noise suppression with RNNoise (xiph's recurrent denoiser, WebAssembly from
 * `@echogarden/rnnoise-wasm`), the alternative to libspeexdsp's preprocessor
 * (noise-suppressor.ts) behind the same `NoiseSuppressor`. RNNoise takes
 * 48 kHz in 10 ms frames only, so a line's audio goes up to 48 kHz and back
 * through the codecs' resampler: that is most of its cost at 8 kHz, and its
 * output lags the input by the resamplers' delay plus up to one 20 ms frame
 * (it returns whole frames at the line's rate).
 * Measured against speexdsp in bench/vad.bench.ts: fewer word errors of the
 * local recognizer and no added VAD false starts in stationary noise, at
 * about 50 times the CPU (docs/performance.md).
 *
 * The module is loaded on first use (a top-level await would load it in every
 * process that imports the codecs); `loadRnnoise()` does it at start-up.
 */
import { CodecError } from "./codec-error.js";
import { createResampler, type Resampler } from "./resampler.js";
import type { NoiseSuppressor, NoiseSuppressorOptions } from "./noise-suppressor.js";

interface RnnoiseModule {
  HEAPF32: Float32Array;
  _malloc(size: number): number;
  _free(ptr: number): void;
  _rnnoise_create(model: number): number;
  _rnnoise_destroy(state: number): void;
  _rnnoise_process_frame(state: number, out: number, input: number): number;
}

/** RNNoise's frame: 10 ms at 48 kHz. */
const FRAME = 480;
let rn: RnnoiseModule | undefined;
let loading: Promise<void> | undefined;

/** Loads the WebAssembly module once per process; rejects codec_unavailable when it cannot. */
export function loadRnnoise(): Promise<void> {
  loading ??= (async () => {
    try {
      const { default: factory } = await import("@echogarden/rnnoise-wasm");
      rn = (await factory()) as RnnoiseModule;
    } catch (err) {
      loading = undefined;
      throw new CodecError("codec_unavailable", "RNNoise (@echogarden/rnnoise-wasm) could not be loaded", {
        cause: err,
      });
    }
  })();
  return loading;
}

export function createRnnoiseSuppressor(
  options: Omit<NoiseSuppressorOptions, "suppressDb">,
): NoiseSuppressor {
  const { sampleRate } = options;
  if (!rn) throw new CodecError("codec_unavailable", "RNNoise is not loaded (await loadRnnoise() first)");
  if (![8000, 16000, 24000, 48000].includes(sampleRate))
    throw new CodecError(
      "invalid_options",
      `RNNoise takes 8000, 16000, 24000 or 48000 Hz, got ${sampleRate}`,
    );
  const m = rn;
  const up: Resampler | undefined =
    sampleRate === 48000 ? undefined : createResampler({ from: sampleRate, to: 48000 });
  const down: Resampler | undefined =
    sampleRate === 48000 ? undefined : createResampler({ from: 48000, to: sampleRate });
  const state = m._rnnoise_create(0);
  const buf = m._malloc(FRAME * 4);
  if (!state || !buf) throw new CodecError("codec_unavailable", "rnnoise_create failed");
  let pending: Int16Array = new Int16Array(0);
  let held: Int16Array = new Int16Array(0);
  let closed = false;
  const frameSamples = (sampleRate * (options.frameMs ?? 20)) / 1000;
  return {
    sampleRate,
    frameSamples,
    process(pcm) {
      if (closed) throw new CodecError("invalid_state", "the noise suppressor is closed");
      if (!(pcm instanceof Int16Array))
        throw new CodecError("invalid_audio", "process() takes an Int16Array");
      const hi = up ? up.process(pcm) : pcm;
      const all = new Int16Array(pending.length + hi.length);
      all.set(pending);
      all.set(hi, pending.length);
      const whole = all.length - (all.length % FRAME);
      const out = new Int16Array(whole);
      for (let at = 0; at < whole; at += FRAME) {
        // RNNoise works on floats in the 16-bit range; the heap view is taken per frame (memory may grow).
        const view = m.HEAPF32.subarray(buf >> 2, (buf >> 2) + FRAME);
        for (let i = 0; i < FRAME; i++) view[i] = all[at + i]!;
        m._rnnoise_process_frame(state, buf, buf);
        const done = m.HEAPF32.subarray(buf >> 2, (buf >> 2) + FRAME);
        for (let i = 0; i < FRAME; i++) out[at + i] = Math.max(-32768, Math.min(32767, Math.round(done[i]!)));
      }
      pending = all.slice(whole);
      // Whole frames at the line's rate, as the speexdsp engine returns them: the resampler's output
      // wanders by a sample or two per call, and a speech gate takes multiples of 10 ms.
      const ready = down ? down.process(out) : out;
      const joined = new Int16Array(held.length + ready.length);
      joined.set(held);
      joined.set(ready, held.length);
      const frames = joined.length - (joined.length % frameSamples);
      held = joined.slice(frames);
      return joined.subarray(0, frames);
    },
    close() {
      if (closed) return;
      closed = true;
      m._rnnoise_destroy(state);
      m._free(buf);
      up?.close();
      down?.close();
    },
  };
}
