/**
 * The `session.update` of xAI's Voice Agent API. The protocol is OpenAI
 * Realtime's (same client and server event names), but the session object is
 * flatter: `voice`, `instructions` and `turn_detection` at the top of the
 * session (not under `audio`), audio formats as `{type, rate}` with any PCM
 * rate from 8 to 48 kHz, no `type: "realtime"` and no transcription model
 * (the caller's speech is transcribed by the service itself), and server-side
 * tools (`web_search`, `x_search`) beside function tools.
 * Source: https://docs.x.ai/docs/guides/voice/agent ("Session Parameters",
 * "Audio Format").
 */
import { TalkError } from "../../core/index.js";
import type { AudioFormat, RealtimeSessionOptions } from "../../core/index.js";

export type XaiAudioFormat =
  { type: "audio/pcmu" } | { type: "audio/pcma" } | { type: "audio/pcm"; rate: number };

/** xAI's server VAD (`session.turn_detection`); null: the client commits and asks for responses. */
export interface XaiServerVad {
  type: "server_vad";
  /** 0..1; higher needs louder speech. */
  threshold?: number;
  silence_duration_ms?: number;
  prefix_padding_ms?: number;
}

/** A server-side tool the service runs itself (its result never reaches us). */
export type XaiServerTool = { type: "web_search" } | { type: "x_search" };

export interface XaiSessionSettings {
  voice: string;
  turnDetection: XaiServerVad | null;
  serverTools: readonly XaiServerTool[];
}

export const XAI_MIN_PCM_RATE = 8000;
export const XAI_MAX_PCM_RATE = 48000;

/** Our AudioFormat as xAI's format object, or invalid_params when the API cannot carry it. */
export function toXaiAudioFormat(format: AudioFormat, which: "input" | "output"): XaiAudioFormat {
  if (format.channels !== 1)
    throw new TalkError(
      "invalid_params",
      `xAI ${which} audio must be mono, got ${format.channels} channels.`,
    );
  if (format.encoding === "g711_ulaw" && format.sampleRate === 8000) return { type: "audio/pcmu" };
  if (format.encoding === "g711_alaw" && format.sampleRate === 8000) return { type: "audio/pcma" };
  if (
    format.encoding === "pcm16" &&
    format.sampleRate >= XAI_MIN_PCM_RATE &&
    format.sampleRate <= XAI_MAX_PCM_RATE
  )
    return { type: "audio/pcm", rate: format.sampleRate };
  throw new TalkError(
    "invalid_params",
    `xAI ${which} audio must be pcm16 at 8-48 kHz or G.711 at 8 kHz, got ${format.encoding} at ${format.sampleRate} Hz.`,
  );
}

/** The `session.update` client event for these options. */
export function buildXaiSessionUpdate(
  options: RealtimeSessionOptions,
  settings: XaiSessionSettings,
): Record<string, unknown> {
  return {
    type: "session.update",
    session: {
      instructions: options.instructions,
      voice: options.voice ?? settings.voice,
      // No automatic responses (the brain reply path): no server VAD, so nothing answers by itself.
      turn_detection: options.autoRespond === false ? null : settings.turnDetection,
      audio: {
        input: { format: toXaiAudioFormat(options.inputFormat, "input") },
        output: { format: toXaiAudioFormat(options.outputFormat, "output") },
      },
      tools: [
        ...options.tools.map((tool) => ({
          type: "function",
          name: tool.name,
          description: tool.description,
          parameters: tool.parameters,
        })),
        ...settings.serverTools.map((tool) => ({ ...tool })),
      ],
    },
  };
}
