import { bytesFromPcm16, isCodecError, pcm16FromBytes } from "../codecs/index.js";
import type { AudioEncoding, AudioFormat } from "../codecs/index.js";
import { TalkError } from "./errors.js";

/**
 * Audio that says what it holds. Every piece of audio that crosses a module
 * (a TTS provider's output, what a pipeline writes to a sink, what a sink
 * plays) is one of two kinds, and consumers switch on `kind`:
 *
 * - `pcm`: signed 16-bit samples (interleaved when stereo) in a PCM16 format;
 * - `encoded`: bytes of an encoded format (G.711 u-law / A-law, Opus) passed
 *   through as they are, e.g. a u-law provider's answer to a u-law phone line.
 *
 * A consumer that can play only one kind says so with a clear `invalid_audio`
 * (`expectPcm`), never reads one kind as the other.
 */
export type AudioChunk = PcmChunk | EncodedChunk;

/** A PCM16 format. */
export type PcmFormat = AudioFormat & { readonly encoding: "pcm16" };
/** An encoded (not PCM) format. */
export type EncodedFormat = AudioFormat & { readonly encoding: Exclude<AudioEncoding, "pcm16"> };

export interface PcmChunk {
  readonly kind: "pcm";
  /** Samples, interleaved when there is more than one channel; whole frames of every channel. */
  readonly samples: Int16Array;
  readonly format: PcmFormat;
}

export interface EncodedChunk {
  readonly kind: "encoded";
  /** The encoded bytes as they travel (G.711: one byte per sample; Opus: one packet). */
  readonly bytes: Uint8Array;
  readonly format: EncodedFormat;
}

export function isPcmFormat(format: AudioFormat): format is PcmFormat {
  return format.encoding === "pcm16";
}

/** PCM16 samples in `format`. Throws invalid_audio for a format that is not PCM16 or a partial frame. */
export function pcmChunk(samples: Int16Array, format: AudioFormat): PcmChunk {
  if (!isPcmFormat(format))
    throw new TalkError(
      "invalid_audio",
      `PCM samples cannot be ${describeAudioFormat(format)}: encoded audio is an encoded chunk.`,
    );
  if (samples.length % format.channels !== 0)
    throw new TalkError(
      "invalid_audio",
      `${describeAudioFormat(format)} needs whole frames; got ${samples.length} samples.`,
    );
  return { kind: "pcm", samples, format };
}

/** Encoded bytes in `format`, passed through as they are. Throws invalid_audio for a PCM16 format. */
export function encodedChunk(bytes: Uint8Array, format: AudioFormat): EncodedChunk {
  if (isPcmFormat(format))
    throw new TalkError("invalid_audio", `PCM16 is carried as samples (a pcm chunk), not as encoded bytes.`);
  return { kind: "encoded", bytes, format: format as EncodedFormat };
}

/**
 * Audio as it travels on a wire (little-endian PCM16 bytes, or encoded bytes)
 * as a chunk of its kind. The samples share memory with `bytes` when they are
 * 2-byte aligned. Throws invalid_audio for PCM that is not whole samples.
 */
export function audioFromBytes(bytes: Uint8Array, format: AudioFormat): AudioChunk {
  if (!isPcmFormat(format)) return encodedChunk(bytes, format);
  let samples: Int16Array;
  try {
    samples = pcm16FromBytes(bytes);
  } catch (err) {
    if (isCodecError(err)) throw new TalkError("invalid_audio", err.message, { cause: err });
    throw err;
  }
  return pcmChunk(samples, format);
}

/** The chunk's wire bytes: PCM16 little-endian (sharing memory with the samples), or the encoded bytes. */
export function audioBytes(chunk: AudioChunk): Uint8Array {
  return chunk.kind === "pcm" ? bytesFromPcm16(chunk.samples) : chunk.bytes;
}

/** Bytes the chunk takes on the wire (what output.audio events count). */
export function audioByteLength(chunk: AudioChunk): number {
  return chunk.kind === "pcm" ? chunk.samples.byteLength : chunk.bytes.byteLength;
}

/**
 * The chunk as PCM, or a clear invalid_audio naming `consumer` when it is
 * encoded: for a consumer that can only play samples (a meeting's microphone,
 * a resampler), so an encoded chunk is never misread as samples.
 */
export function expectPcm(chunk: AudioChunk, consumer: string): PcmChunk {
  if (chunk.kind === "pcm") return chunk;
  throw new TalkError(
    "invalid_audio",
    `${consumer} takes PCM16 samples, not ${describeAudioFormat(chunk.format)} (an encoded chunk).`,
    { details: { encoding: chunk.format.encoding } },
  );
}

/** `encoding/rate/channels`, for messages. */
export function describeAudioFormat(format: AudioFormat): string {
  return `${format.encoding}/${format.sampleRate}/${format.channels}`;
}
