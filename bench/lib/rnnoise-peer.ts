/**
 * RNNoise (xiph's recurrent denoiser, @echogarden/rnnoise-wasm, a bench-only
 * peer in devDependencies) as a stream suppressor at any line rate: RNNoise
 * takes 48 kHz in 10 ms frames only, so the line's audio goes up to 48 kHz
 * and back down through the codecs' resampler, which is part of its cost
 * on a phone leg. Used by bench/vad.bench.ts beside libspeexdsp's suppressor.
 */
import { createResampler } from "../../src/codecs/index.js";

interface RnnoiseModule {
  HEAPF32: Float32Array;
  _malloc(size: number): number;
  _free(ptr: number): void;
  _rnnoise_create(model: number): number;
  _rnnoise_destroy(state: number): void;
  _rnnoise_process_frame(state: number, out: number, input: number): number;
}

const { default: factory } = (await import("@echogarden/rnnoise-wasm")) as {
  default: () => Promise<RnnoiseModule>;
};
const rn = await factory();
const FRAME = 480;

export function createRnnoise(rate: number): { process(pcm: Int16Array): Int16Array; close(): void } {
  const up = rate === 48000 ? undefined : createResampler({ from: rate, to: 48000 });
  const down = rate === 48000 ? undefined : createResampler({ from: 48000, to: rate });
  const state = rn._rnnoise_create(0);
  const buf = rn._malloc(FRAME * 4);
  let pending = new Int16Array(0);
  return {
    process(pcm) {
      const hi = up ? up.process(pcm) : pcm;
      const all = new Int16Array(pending.length + hi.length);
      all.set(pending);
      all.set(hi, pending.length);
      const whole = all.length - (all.length % FRAME);
      const out = new Int16Array(whole);
      for (let at = 0; at < whole; at += FRAME) {
        // RNNoise works on floats in the 16-bit range.
        const view = rn.HEAPF32.subarray(buf >> 2, (buf >> 2) + FRAME);
        for (let i = 0; i < FRAME; i++) view[i] = all[at + i]!;
        rn._rnnoise_process_frame(state, buf, buf);
        const done = rn.HEAPF32.subarray(buf >> 2, (buf >> 2) + FRAME);
        for (let i = 0; i < FRAME; i++) out[at + i] = Math.max(-32768, Math.min(32767, Math.round(done[i]!)));
      }
      pending = all.slice(whole);
      return down ? down.process(out) : out;
    },
    close() {
      rn._rnnoise_destroy(state);
      rn._free(buf);
      up?.close?.();
      down?.close?.();
    },
  };
}
