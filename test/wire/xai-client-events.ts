/**
 * xAI Voice Agent's client events, for the wire type check: the protocol is
 * OpenAI Realtime's (same client events, checked against openai's declared
 * `RealtimeClientEvent`), except `session.update`, whose session object xAI
 * documents flatter (https://docs.x.ai/docs/guides/voice/agent, "Session
 * Parameters", "Audio Format"): `voice`, `instructions` and `turn_detection`
 * at the top, audio formats `{type, rate}` with any PCM rate from 8 to 48 kHz,
 * function tools (openai's `RealtimeFunctionTool`) beside xAI's server-side
 * tools. xAI publishes no SDK: this session type is written from its docs.
 */
import type {
  RealtimeClientEvent,
  RealtimeFunctionTool,
  SessionUpdateEvent,
} from "openai/resources/realtime/realtime";

export type XaiAudioFormat =
  { type: "audio/pcmu" } | { type: "audio/pcma" } | { type: "audio/pcm"; rate: number };

export interface XaiSession {
  instructions?: string;
  voice?: string;
  turn_detection?: {
    type: "server_vad";
    threshold?: number;
    silence_duration_ms?: number;
    prefix_padding_ms?: number;
  } | null;
  audio?: { input?: { format?: XaiAudioFormat }; output?: { format?: XaiAudioFormat } };
  tools?: Array<RealtimeFunctionTool | { type: "web_search" } | { type: "x_search" }>;
  tool_choice?: "auto" | "none" | "required";
}

export interface XaiSessionUpdateEvent {
  type: "session.update";
  event_id?: string;
  session: XaiSession;
}

export type XaiClientEvent = Exclude<RealtimeClientEvent, SessionUpdateEvent> | XaiSessionUpdateEvent;

/**
 * The ephemeral-token request (`POST /v1/realtime/client_secrets`): only
 * `expires_after.seconds` ("does not support session or expires_after.anchor",
 * https://docs.x.ai/developers/model-capabilities/audio/ephemeral-tokens).
 */
export interface XaiClientSecretRequest {
  expires_after: { seconds: number };
}
