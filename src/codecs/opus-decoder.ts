/**
 * Opus decoding over native libopus. libopus decodes natively to 8, 12, 16,
 * 24 or 48 kHz, so a consumer that wants 16 kHz for speech recognition gets
 * it straight from the decoder, without a resampler.
 *
 * Loss: decodeLost() hands libopus a packet with the previous packet's TOC
 * and no payload, which makes it run packet-loss concealment for exactly
 * that duration. In-band FEC decoding (opus_decode with decode_fec=1) is not
 * reachable through @discordjs/opus 0.10, which hard-codes decode_fec=0; a
 * lost packet is always concealed by PLC, and packets that carry FEC
 * (opusPacketHasFec) decode normally.
 */
import { CodecError } from "./codec-error.js";
import { assertOpusRate, nativeOpus, type NativeOpus } from "./opus-binding.js";
import { concealmentPacket, parseOpusPacket } from "./opus-packet.js";
import { assertChannels, pcm16FromBytes } from "./pcm.js";

export interface OpusDecoderOptions {
  /** Output rate in Hz: 8000, 12000, 16000, 24000 or 48000. Required. */
  sampleRate: number;
  /** Output channels, 1 or 2 (a stereo packet is downmixed for 1, a mono one duplicated for 2). Default 1. */
  channels?: number;
}

export interface OpusDecoder {
  readonly sampleRate: number;
  readonly channels: number;
  /** Decodes one packet to interleaved PCM16. Throws `invalid_packet` for a malformed packet; the decoder stays usable. */
  decode(packet: Uint8Array): Int16Array;
  /**
   * Conceals lost audio: `durationMs` of PLC (default: the duration of the
   * last packet, or 20 ms before any packet), a multiple of the last
   * packet's frame duration, at most 120 ms. Before the first packet this
   * is silence.
   */
  decodeLost(durationMs?: number): Int16Array;
  /** Drops the native decoder. Idempotent; later calls throw invalid_state. */
  close(): void;
}

export function createOpusDecoder(options: OpusDecoderOptions): OpusDecoder {
  if (options === null || typeof options !== "object") {
    throw new CodecError("invalid_options", "createOpusDecoder needs { sampleRate }");
  }
  const sampleRate = options.sampleRate;
  const channels = options.channels ?? 1;
  assertOpusRate(sampleRate);
  assertChannels(channels);
  return new NativeOpusDecoder(sampleRate, channels);
}

class NativeOpusDecoder implements OpusDecoder {
  readonly sampleRate: number;
  readonly channels: number;
  #native: NativeOpus | undefined;
  /** TOC and frame count of the last packet decoded (-1: none yet); copied, as callers reuse buffers. */
  #lastToc = -1;
  #lastFrames = 1;

  constructor(sampleRate: number, channels: number) {
    this.sampleRate = sampleRate;
    this.channels = channels;
    this.#native = nativeOpus(sampleRate, channels);
  }

  decode(packet: Uint8Array): Int16Array {
    const native = this.#open();
    // The binding would treat an empty buffer as a loss and conceal 120 ms: reject it here.
    // Everything else is validated by libopus; the full TOC parse waits for decodeLost().
    if (!(packet instanceof Uint8Array) || packet.length === 0) {
      throw new CodecError("invalid_packet", "empty Opus packet (a lost packet is decodeLost())");
    }
    const out = this.#decode(native, packet);
    const code = packet[0]! & 3;
    this.#lastToc = packet[0]!;
    this.#lastFrames = code === 0 ? 1 : code === 3 ? packet[1]! & 0x3f : 2;
    return out;
  }

  decodeLost(durationMs?: number): Int16Array {
    const native = this.#open();
    const frameUs =
      this.#lastToc < 0 ? 20_000 : parseOpusPacket(new Uint8Array([this.#lastToc & 0xfc])).frameDurationUs;
    const us = durationMs === undefined ? frameUs * this.#lastFrames : Math.round(durationMs * 1000);
    if (!Number.isFinite(us) || us <= 0 || us > 120_000 || us % 2_500 !== 0) {
      throw new CodecError(
        "invalid_options",
        `decodeLost duration must be a multiple of 2.5 ms up to 120 ms, got ${String(durationMs)}`,
      );
    }
    if (this.#lastToc < 0) return new Int16Array(((us * this.sampleRate) / 1_000_000) * this.channels);
    if (us % frameUs !== 0) {
      throw new CodecError(
        "invalid_options",
        `decodeLost duration must be a multiple of the last frame (${frameUs / 1000} ms), got ${durationMs} ms`,
      );
    }
    return this.#decode(native, concealmentPacket(this.#lastToc, us));
  }

  close(): void {
    this.#native = undefined;
  }

  #decode(native: NativeOpus, packet: Uint8Array): Int16Array {
    const buf = Buffer.isBuffer(packet)
      ? packet
      : Buffer.from(packet.buffer, packet.byteOffset, packet.byteLength);
    let pcm: Buffer;
    try {
      pcm = native.decode(buf);
    } catch (err) {
      throw new CodecError("invalid_packet", `Opus packet rejected by libopus: ${(err as Error).message}`, {
        cause: err,
      });
    }
    return pcm16FromBytes(pcm);
  }

  #open(): NativeOpus {
    if (!this.#native) throw new CodecError("invalid_state", "the Opus decoder is closed");
    return this.#native;
  }
}
