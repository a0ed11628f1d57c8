/**
 * The Talk vocabulary (seed 000): mode, transport and brain are kept separate.
 * Surfaces (phone calls, meetings, browsers) are not part of this vocabulary:
 * they are adapters that map their media onto these primitives.
 */

export const TALK_MODES = ["realtime", "stt-tts", "transcription"] as const;
export type TalkMode = (typeof TALK_MODES)[number];

export const TALK_TRANSPORTS = ["webrtc", "provider-websocket", "gateway-relay", "managed-room"] as const;
export type TalkTransport = (typeof TALK_TRANSPORTS)[number];

export const TALK_BRAINS = ["agent-consult", "direct-tools", "none"] as const;
export type TalkBrain = (typeof TALK_BRAINS)[number];

/** Who owns the provider media transport of a session. */
export type TalkSessionOwner = "client" | "gateway";

/** Transports whose provider media the client owns (`talk.client.create`). */
export const CLIENT_OWNED_TRANSPORTS: ReadonlySet<TalkTransport> = new Set(["webrtc", "provider-websocket"]);
/** Transports whose live state the Gateway owns (`talk.session.create`). */
export const GATEWAY_OWNED_TRANSPORTS: ReadonlySet<TalkTransport> = new Set([
  "gateway-relay",
  "managed-room",
]);

export interface TalkCombination {
  readonly mode: TalkMode;
  readonly transport: TalkTransport;
  readonly brain: TalkBrain;
  readonly owner: TalkSessionOwner;
}

/** The supported creation matrix of seed 000. Anything else is rejected. */
export const CREATION_MATRIX: readonly TalkCombination[] = Object.freeze([
  { mode: "realtime", transport: "webrtc", brain: "agent-consult", owner: "client" },
  { mode: "realtime", transport: "provider-websocket", brain: "agent-consult", owner: "client" },
  { mode: "realtime", transport: "gateway-relay", brain: "agent-consult", owner: "gateway" },
  { mode: "transcription", transport: "gateway-relay", brain: "none", owner: "gateway" },
  { mode: "stt-tts", transport: "managed-room", brain: "agent-consult", owner: "gateway" },
  { mode: "stt-tts", transport: "managed-room", brain: "direct-tools", owner: "gateway" },
]);

export function findCombination(
  mode: TalkMode,
  transport: TalkTransport,
  brain: TalkBrain,
): TalkCombination | undefined {
  return CREATION_MATRIX.find((c) => c.mode === mode && c.transport === transport && c.brain === brain);
}

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
