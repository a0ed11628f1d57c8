/**
 * A carrier line's audio format, as the call needs it: how caller audio
 * becomes the leg's PCM, how assistant audio becomes the line's bytes, and
 * the frame sizes playout and clock acknowledgements count with. One per
 * carrier (`CarrierProtocol.lineFormat`): G.711 u-law or A-law at 8 kHz
 * (Twilio, Telnyx, Plivo), or 16-bit PCM (Vonage's L16 at 16 kHz).
 */
import {
  bytesFromPcm16,
  decodeAlaw,
  decodeMulaw,
  encodeAlaw,
  encodeMulaw,
  pcm16FromBytes,
} from "../codecs/index.js";
import { describeAudioFormat as describe, TalkError } from "../core/index.js";
import type { AudioChunk, AudioFormat } from "../core/index.js";
import { sameAudioFormat } from "../core/index.js";

export interface LineAudio {
  /** The line's wire format. */
  readonly format: AudioFormat;
  /** The PCM the leg works in: 16-bit at the line's rate (no resampling on the way in). */
  readonly pcmFormat: AudioFormat;
  readonly bytesPerMs: number;
  /** Bytes of one 20 ms frame. */
  readonly frameBytes: number;
  /** The byte that is silence on this line (pads a partial last frame). */
  readonly silenceByte: number;
  /** Caller audio to PCM; throws invalid_audio for a payload that is not whole samples. */
  toPcm(bytes: Uint8Array): Int16Array;
  /**
   * Assistant audio to the line's bytes: PCM16 at the line's rate (encoded here), or encoded audio already
   * in the line's format (passed through untouched); invalid_audio otherwise.
   */
  fromChunk(chunk: AudioChunk): Uint8Array;
}

export function lineAudio(format: AudioFormat): LineAudio {
  if (format.channels !== 1 || (format.sampleRate !== 8000 && format.sampleRate !== 16_000))
    throw new TalkError("config_invalid", `A phone line is mono at 8 or 16 kHz, not ${describe(format)}.`);
  const pcmFormat: AudioFormat = Object.freeze({
    encoding: "pcm16",
    sampleRate: format.sampleRate,
    channels: 1,
  });
  const ms = format.sampleRate / 1000;
  const fromPcm = (pcm: Int16Array): Uint8Array => {
    switch (format.encoding) {
      case "g711_ulaw":
        return encodeMulaw(pcm);
      case "g711_alaw":
        return encodeAlaw(pcm);
      default:
        return bytesFromPcm16(pcm);
    }
  };
  const base = { format, pcmFormat, fromChunk } as const;
  function fromChunk(chunk: AudioChunk): Uint8Array {
    switch (chunk.kind) {
      case "pcm":
        if (sameAudioFormat(chunk.format, pcmFormat)) return fromPcm(chunk.samples);
        break;
      case "encoded":
        if (sameAudioFormat(chunk.format, format)) return chunk.bytes;
        break;
    }
    throw new TalkError(
      "invalid_audio",
      `This phone line plays ${describe(format)} or ${describe(pcmFormat)}, not ${describe(chunk.format)}.`,
    );
  }
  switch (format.encoding) {
    case "g711_ulaw":
      return Object.freeze({
        ...base,
        bytesPerMs: ms,
        frameBytes: 20 * ms,
        silenceByte: 0xff,
        toPcm: decodeMulaw,
      });
    case "g711_alaw":
      return Object.freeze({
        ...base,
        bytesPerMs: ms,
        frameBytes: 20 * ms,
        silenceByte: 0xd5,
        toPcm: decodeAlaw,
      });
    case "pcm16":
      return Object.freeze({
        ...base,
        bytesPerMs: 2 * ms,
        frameBytes: 40 * ms,
        silenceByte: 0,
        toPcm: (bytes: Uint8Array) => {
          try {
            return pcm16FromBytes(bytes);
          } catch (err) {
            throw new TalkError("invalid_audio", (err as Error).message);
          }
        },
      });
    default:
      throw new TalkError("config_invalid", `A phone line cannot carry ${describe(format)}.`);
  }
}
