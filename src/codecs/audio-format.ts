/** Audio encodings that travel through the system. */
export const AUDIO_ENCODINGS = ["pcm16", "g711_ulaw", "g711_alaw", "opus"] as const;
export type AudioEncoding = (typeof AUDIO_ENCODINGS)[number];

/**
 * Describes audio that travels beside it. PCM is always signed 16-bit
 * little-endian, interleaved when there is more than one channel.
 */
export interface AudioFormat {
  readonly encoding: AudioEncoding;
  readonly sampleRate: number;
  readonly channels: number;
}

export const PCM16_16K: AudioFormat = Object.freeze({ encoding: "pcm16", sampleRate: 16_000, channels: 1 });
export const PCM16_24K: AudioFormat = Object.freeze({ encoding: "pcm16", sampleRate: 24_000, channels: 1 });
export const ULAW_8K: AudioFormat = Object.freeze({ encoding: "g711_ulaw", sampleRate: 8_000, channels: 1 });

/** Bytes per second of an audio format, for durations and accounting (opus: unknown, returns 0). */
export function bytesPerSecond(format: AudioFormat): number {
  switch (format.encoding) {
    case "pcm16":
      return format.sampleRate * format.channels * 2;
    case "g711_ulaw":
    case "g711_alaw":
      return format.sampleRate * format.channels;
    case "opus":
      return 0;
  }
}

/** Duration in milliseconds of `byteLength` bytes of `format` (0 for opus). */
export function durationMs(format: AudioFormat, byteLength: number): number {
  const bps = bytesPerSecond(format);
  return bps === 0 ? 0 : (byteLength * 1000) / bps;
}

/** Whether two formats are the same stream shape: encoding, rate and channel count. */
export function sameAudioFormat(a: AudioFormat, b: AudioFormat): boolean {
  return a.encoding === b.encoding && a.sampleRate === b.sampleRate && a.channels === b.channels;
}
