import { CodecError } from "./codec-error.js";

/** Sample rates the codec layer handles end to end (resampler, frame assembler, WAV). */
export const SUPPORTED_SAMPLE_RATES = [8000, 12000, 16000, 22050, 24000, 32000, 44100, 48000] as const;
export type SupportedSampleRate = (typeof SUPPORTED_SAMPLE_RATES)[number];

const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Throws `unsupported_rate` unless `rate` is one of SUPPORTED_SAMPLE_RATES. */
export function assertSampleRate(rate: unknown, what = "sampleRate"): asserts rate is SupportedSampleRate {
  if (typeof rate !== "number" || !(SUPPORTED_SAMPLE_RATES as readonly number[]).includes(rate)) {
    throw new CodecError(
      "unsupported_rate",
      `${what} must be one of ${SUPPORTED_SAMPLE_RATES.join(", ")} Hz, got ${String(rate)}`,
    );
  }
}

/** Throws `invalid_options` unless `channels` is 1 or 2. */
export function assertChannels(channels: unknown): asserts channels is 1 | 2 {
  if (channels !== 1 && channels !== 2) {
    throw new CodecError("invalid_options", `channels must be 1 or 2, got ${String(channels)}`);
  }
}

/**
 * Signed 16-bit little-endian bytes as samples. Shares memory with `bytes`
 * when it is 2-byte aligned (the common case for Buffers from the network is
 * not, so expect a copy there); throws `invalid_audio` on an odd length.
 */
export function pcm16FromBytes(bytes: Uint8Array): Int16Array {
  if (bytes.byteLength % 2 !== 0) {
    throw new CodecError("invalid_audio", `PCM16 needs an even number of bytes, got ${bytes.byteLength}`);
  }
  if (LITTLE_ENDIAN_HOST && bytes.byteOffset % 2 === 0) {
    return new Int16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 2);
  }
  const out = new Int16Array(bytes.byteLength / 2);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < out.length; i++) out[i] = view.getInt16(i * 2, true);
  return out;
}

/** Samples as signed 16-bit little-endian bytes, sharing memory with `pcm`. */
export function bytesFromPcm16(pcm: Int16Array): Uint8Array {
  if (LITTLE_ENDIAN_HOST) return new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength);
  const out = new Uint8Array(pcm.byteLength);
  const view = new DataView(out.buffer);
  for (let i = 0; i < pcm.length; i++) view.setInt16(i * 2, pcm[i]!, true);
  return out;
}

/** Root-mean-square level of `pcm` in sample units (0 for empty input). */
export function rms(pcm: Int16Array): number {
  if (pcm.length === 0) return 0;
  let sum = 0;
  for (let i = 0; i < pcm.length; i++) {
    const v = pcm[i]!;
    sum += v * v;
  }
  return Math.sqrt(sum / pcm.length);
}

/**
 * Level in dB relative to a full-scale square wave (32768), so a full-scale
 * sine reads about -3 dBFS. Digital silence reads -Infinity.
 */
export function dbfs(pcm: Int16Array): number {
  return 20 * Math.log10(rms(pcm) / 32768);
}
