/**
 * The native libopus binding (@discordjs/opus), loaded on first use so that a
 * machine where it failed to build can still use every other codec; creating
 * an Opus encoder or decoder there throws `codec_unavailable`.
 */
import { createRequire } from "node:module";
import { CodecError } from "./codec-error.js";

export interface NativeOpus {
  encode(pcm: Buffer): Buffer;
  decode(packet: Buffer): Buffer;
  applyEncoderCTL(ctl: number, value: number): void;
  applyDecoderCTL(ctl: number, value: number): void;
}

type NativeOpusCtor = new (rate: number, channels: number) => NativeOpus;

let ctor: NativeOpusCtor | undefined;
let loadError: unknown;

export function nativeOpus(rate: number, channels: number): NativeOpus {
  if (!ctor && loadError === undefined) {
    try {
      ctor = (createRequire(import.meta.url)("@discordjs/opus") as { OpusEncoder: NativeOpusCtor })
        .OpusEncoder;
    } catch (err) {
      loadError = err;
    }
  }
  if (!ctor) {
    throw new CodecError(
      "codec_unavailable",
      "the native Opus binding (@discordjs/opus) is not built; run npm rebuild @discordjs/opus",
      {
        cause: loadError,
      },
    );
  }
  return new ctor(rate, channels);
}

/** libopus request numbers (opus_defines.h). */
export const OPUS_CTL = Object.freeze({
  SET_APPLICATION: 4000,
  SET_BITRATE: 4002,
  SET_COMPLEXITY: 4010,
  SET_INBAND_FEC: 4012,
  SET_PACKET_LOSS_PERC: 4014,
  SET_SIGNAL: 4024,
});

export const OPUS_APPLICATION = Object.freeze({ voip: 2048, audio: 2049, lowdelay: 2051 });
export const OPUS_SIGNAL_VOICE = 3001;

/** Rates libopus encodes from and decodes to natively. */
export const OPUS_RATES = [8000, 12000, 16000, 24000, 48000] as const;

export function assertOpusRate(rate: unknown): asserts rate is (typeof OPUS_RATES)[number] {
  if (typeof rate !== "number" || !(OPUS_RATES as readonly number[]).includes(rate)) {
    throw new CodecError(
      "unsupported_rate",
      `Opus sampleRate must be one of ${OPUS_RATES.join(", ")} Hz, got ${String(rate)}`,
    );
  }
}
