/** Opus encoding over native libopus (@discordjs/opus). */
import { CodecError } from "./codec-error.js";
import {
  assertOpusRate,
  nativeOpus,
  OPUS_APPLICATION,
  OPUS_CTL,
  OPUS_SIGNAL_VOICE,
  type NativeOpus,
} from "./opus-binding.js";
import { assertChannels } from "./pcm.js";

export type OpusApplication = keyof typeof OPUS_APPLICATION;

export interface OpusEncoderOptions {
  /** Input rate in Hz: 8000, 12000, 16000, 24000 or 48000. Required. */
  sampleRate: number;
  /** Interleaved input channels, 1 or 2. Default 1. */
  channels?: number;
  /** Target bits per second, 6000..510000. Default 32000: transparent wideband speech. */
  bitrate?: number;
  /**
   * Encoder effort 0..10. Default 5: about half the CPU of 10 for speech
   * that is hard to tell apart, which matters at hundreds of calls per core.
   */
  complexity?: number;
  /** libopus application: "voip" (speech), "audio" or "lowdelay". Default "voip". */
  application?: OpusApplication;
  /** Embed in-band FEC (SILK LBRR) so a receiver can rebuild a lost packet from the next. Default false. */
  fec?: boolean;
  /** Expected packet loss in percent, 0..100; FEC needs it above 0 to spend bits. Default 0. */
  packetLossPercent?: number;
}

export interface OpusEncoder {
  readonly sampleRate: number;
  readonly channels: number;
  /** Frame sizes accepted by encode(), in samples per channel (2.5, 5, 10, 20, 40 and 60 ms). */
  readonly frameSizes: readonly number[];
  /** Encodes exactly one frame of interleaved PCM16 into one packet. */
  encode(pcm: Int16Array): Uint8Array;
  /** Drops the native encoder. Idempotent; later calls throw invalid_state. */
  close(): void;
}

const DEFAULTS = Object.freeze({
  channels: 1,
  bitrate: 32_000,
  complexity: 5,
  application: "voip" as OpusApplication,
  fec: false,
  packetLossPercent: 0,
});

function intIn(name: string, v: unknown, min: number, max: number): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max) {
    throw new CodecError("invalid_options", `${name} must be an integer ${min}..${max}, got ${String(v)}`);
  }
  return v;
}

export function createOpusEncoder(options: OpusEncoderOptions): OpusEncoder {
  if (options === null || typeof options !== "object") {
    throw new CodecError("invalid_options", "createOpusEncoder needs { sampleRate }");
  }
  const o = { ...DEFAULTS };
  for (const [k, v] of Object.entries(options)) if (v !== undefined) (o as Record<string, unknown>)[k] = v;
  const sampleRate = (options as { sampleRate: unknown }).sampleRate;
  assertOpusRate(sampleRate);
  assertChannels(o.channels);
  intIn("bitrate", o.bitrate, 6_000, 510_000);
  intIn("complexity", o.complexity, 0, 10);
  intIn("packetLossPercent", o.packetLossPercent, 0, 100);
  if (!Object.hasOwn(OPUS_APPLICATION, o.application)) {
    throw new CodecError(
      "invalid_options",
      `application must be voip, audio or lowdelay, got ${String(o.application)}`,
    );
  }
  if (typeof o.fec !== "boolean") throw new CodecError("invalid_options", "fec must be a boolean");

  const native = nativeOpus(sampleRate, o.channels);
  try {
    // The application can only change before the first encode; the binding creates its encoder as "audio".
    native.applyEncoderCTL(OPUS_CTL.SET_APPLICATION, OPUS_APPLICATION[o.application]);
    native.applyEncoderCTL(OPUS_CTL.SET_BITRATE, o.bitrate);
    native.applyEncoderCTL(OPUS_CTL.SET_COMPLEXITY, o.complexity);
    native.applyEncoderCTL(OPUS_CTL.SET_INBAND_FEC, o.fec ? 1 : 0);
    native.applyEncoderCTL(OPUS_CTL.SET_PACKET_LOSS_PERC, o.packetLossPercent);
    if (o.application === "voip") native.applyEncoderCTL(OPUS_CTL.SET_SIGNAL, OPUS_SIGNAL_VOICE);
  } catch (err) {
    throw new CodecError(
      "codec_unavailable",
      `libopus refused the encoder settings: ${(err as Error).message}`,
      { cause: err },
    );
  }
  return new NativeOpusEncoder(native, sampleRate, o.channels);
}

class NativeOpusEncoder implements OpusEncoder {
  readonly sampleRate: number;
  readonly channels: number;
  readonly frameSizes: readonly number[];
  #native: NativeOpus | undefined;
  #validLengths: ReadonlySet<number>;

  constructor(native: NativeOpus, sampleRate: number, channels: number) {
    this.#native = native;
    this.sampleRate = sampleRate;
    this.channels = channels;
    this.frameSizes = Object.freeze([2.5, 5, 10, 20, 40, 60].map((ms) => (sampleRate * ms) / 1000));
    this.#validLengths = new Set(this.frameSizes.map((n) => n * channels));
  }

  encode(pcm: Int16Array): Uint8Array {
    const native = this.#native;
    if (!native) throw new CodecError("invalid_state", "the Opus encoder is closed");
    if (!(pcm instanceof Int16Array))
      throw new CodecError("invalid_audio", "Opus input must be an Int16Array");
    // libopus rejects other sizes, and the binding would then copy a negative length: check here.
    if (!this.#validLengths.has(pcm.length)) {
      throw new CodecError(
        "invalid_audio",
        `an Opus frame at ${this.sampleRate} Hz x ${this.channels} must hold ${[...this.#validLengths].join(", ")} samples, got ${pcm.length}`,
      );
    }
    try {
      return native.encode(Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength));
    } catch (err) {
      throw new CodecError("invalid_audio", `libopus could not encode the frame: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }

  close(): void {
    this.#native = undefined;
  }
}
