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

// Audio formats live with the codecs (the edge layer); core's public face keeps their names.
export {
  AUDIO_ENCODINGS,
  type AudioEncoding,
  type AudioFormat,
  PCM16_16K,
  PCM16_24K,
  ULAW_8K,
  bytesPerSecond,
  durationMs,
  sameAudioFormat,
} from "../codecs/index.js";
