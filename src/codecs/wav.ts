/**
 * WAV read/write for tests, fixtures and the CLI (not the media path), over
 * `wavefile`. Whatever the file holds (8/24/32-bit, float, u-law, A-law) is
 * read as PCM16, the one format the rest of the system carries.
 */
import wavefile from "wavefile";
import type { AudioFormat } from "./audio-format.js";
import { CodecError } from "./codec-error.js";
import { decodeAlaw } from "./alaw.js";
import { decodeMulaw } from "./mulaw.js";
import { bytesFromPcm16 } from "./pcm.js";

export interface WavAudio {
  /** Always `pcm16`, with the file's rate and channel count. */
  readonly format: AudioFormat;
  /** Interleaved samples. */
  readonly pcm: Int16Array;
}

interface WavFmt {
  audioFormat: number;
  /** WAVE_FORMAT_EXTENSIBLE: the real format tag is the first word of the GUID. */
  subformat?: number[];
  numChannels: number;
  sampleRate: number;
  bitsPerSample: number;
}

const WAVE_FORMAT_ALAW = 6;
const WAVE_FORMAT_MULAW = 7;
const WAVE_FORMAT_IEEE_FLOAT = 3;
const WAVE_FORMAT_EXTENSIBLE = 65534;

export function readWav(bytes: Uint8Array): WavAudio {
  if (!(bytes instanceof Uint8Array))
    throw new CodecError("invalid_audio", "readWav needs the file's bytes as a Uint8Array");
  const wav = new wavefile.WaveFile();
  let raw: Float64Array;
  try {
    wav.fromBuffer(bytes);
    raw = wav.getSamples(true, Float64Array);
  } catch (err) {
    throw new CodecError("invalid_audio", `not a readable WAV file: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const fmt = wav.fmt as WavFmt;
  if (!Number.isInteger(fmt.sampleRate) || fmt.sampleRate <= 0 || fmt.numChannels < 1) {
    throw new CodecError(
      "invalid_audio",
      `WAV header declares ${fmt.sampleRate} Hz x ${fmt.numChannels} channels`,
    );
  }
  const tag = fmt.audioFormat === WAVE_FORMAT_EXTENSIBLE ? (fmt.subformat?.[0] ?? 1) : fmt.audioFormat;
  if (tag === WAVE_FORMAT_IEEE_FLOAT) {
    // wavefile reads extensible float as integers; take the samples from the data chunk directly.
    const data = (wav as unknown as { data: { samples: Uint8Array } }).data.samples;
    const copy = data.slice();
    raw =
      fmt.bitsPerSample === 64
        ? Float64Array.from(new Float64Array(copy.buffer))
        : Float64Array.from(new Float32Array(copy.buffer, 0, copy.length >> 2));
  }
  const depth = tag === WAVE_FORMAT_IEEE_FLOAT ? "float" : wav.bitDepth;
  return {
    format: { encoding: "pcm16", sampleRate: fmt.sampleRate, channels: fmt.numChannels },
    pcm: toPcm16(raw, depth, tag),
  };
}

/**
 * Our own conversions rather than wavefile's toBitDepth/fromMuLaw: those go
 * through floating point and come back one step off for 24-bit input.
 */
function toPcm16(raw: Float64Array, bitDepth: string, tag: number): Int16Array {
  const clamp = (v: number) => (v > 32767 ? 32767 : v < -32768 ? -32768 : v);
  if (tag === WAVE_FORMAT_MULAW || tag === WAVE_FORMAT_ALAW) {
    const codes = Uint8Array.from(raw);
    return tag === WAVE_FORMAT_MULAW ? decodeMulaw(codes) : decodeAlaw(codes);
  }
  switch (bitDepth) {
    case "16":
      return Int16Array.from(raw);
    case "8":
      return Int16Array.from(raw, (v) => (v - 128) << 8);
    case "24":
      return Int16Array.from(raw, (v) => clamp(Math.round(v / 256)));
    case "32":
      return Int16Array.from(raw, (v) => clamp(Math.round(v / 65536)));
    case "float":
      return Int16Array.from(raw, (v) => clamp(Math.round(v * 32768)));
    default:
      throw new CodecError(
        "invalid_audio",
        `WAV sample format ${bitDepth} (format tag ${tag}) is not supported`,
      );
  }
}

/** A 16-bit PCM WAV file of `pcm` (interleaved when `channels` > 1). */
export function writeWav(pcm: Int16Array, format: { sampleRate: number; channels?: number }): Uint8Array {
  const channels = format.channels ?? 1;
  if (!(pcm instanceof Int16Array)) throw new CodecError("invalid_audio", "writeWav needs an Int16Array");
  if (!Number.isInteger(format.sampleRate) || format.sampleRate <= 0) {
    throw new CodecError(
      "unsupported_rate",
      `sampleRate must be a positive integer, got ${String(format.sampleRate)}`,
    );
  }
  if (!Number.isInteger(channels) || channels < 1 || channels > 8) {
    throw new CodecError("invalid_options", `channels must be 1..8, got ${String(channels)}`);
  }
  if (pcm.length % channels !== 0) {
    throw new CodecError(
      "invalid_audio",
      `${pcm.length} samples are not a whole number of ${channels}-channel frames`,
    );
  }
  // The header is written by hand: wavefile's fromScratch copies every sample through a JS array.
  const data = bytesFromPcm16(pcm);
  const out = new Uint8Array(WAV_HEADER_BYTES + data.byteLength);
  out.set(wavHeader({ sampleRate: format.sampleRate, channels }, data.byteLength), 0);
  out.set(data, WAV_HEADER_BYTES);
  return out;
}

/** Bytes of the canonical 16-bit PCM header `wavHeader` writes; the samples follow it. */
export const WAV_HEADER_BYTES = 44;

/** The most data bytes a WAV file's 32-bit sizes can describe. */
const MAX_WAV_DATA_BYTES = 0xffff_ffff - 36;

/**
 * The canonical 44-byte header of a 16-bit PCM WAV file holding `dataBytes`
 * bytes of interleaved samples. A writer that appends samples as they come
 * writes the header again after each append, so the file is valid up to its
 * last update whenever it is cut.
 */
export function wavHeader(format: { sampleRate: number; channels: number }, dataBytes: number): Uint8Array {
  const { sampleRate, channels } = format;
  if (!Number.isInteger(sampleRate) || sampleRate <= 0)
    throw new CodecError(
      "unsupported_rate",
      `sampleRate must be a positive integer, got ${String(sampleRate)}`,
    );
  if (!Number.isInteger(channels) || channels < 1 || channels > 8)
    throw new CodecError("invalid_options", `channels must be 1..8, got ${String(channels)}`);
  if (!Number.isInteger(dataBytes) || dataBytes < 0 || dataBytes > MAX_WAV_DATA_BYTES)
    throw new CodecError(
      "invalid_options",
      `a WAV file holds 0..${MAX_WAV_DATA_BYTES} data bytes, got ${dataBytes}`,
    );
  const out = new Uint8Array(WAV_HEADER_BYTES);
  const v = new DataView(out.buffer);
  const ascii = (o: number, s: string) => {
    for (let i = 0; i < 4; i++) out[o + i] = s.charCodeAt(i);
  };
  ascii(0, "RIFF");
  v.setUint32(4, 36 + dataBytes, true);
  ascii(8, "WAVE");
  ascii(12, "fmt ");
  v.setUint32(16, 16, true);
  v.setUint16(20, 1, true);
  v.setUint16(22, channels, true);
  v.setUint32(24, sampleRate, true);
  v.setUint32(28, sampleRate * channels * 2, true);
  v.setUint16(32, channels * 2, true);
  v.setUint16(34, 16, true);
  ascii(36, "data");
  v.setUint32(40, dataBytes, true);
  return out;
}
