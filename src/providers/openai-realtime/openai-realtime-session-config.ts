/**
 * The GA `session.update` we send when a Gateway-owned Realtime session opens,
 * and the mapping between our AudioFormat and the API's audio formats
 * (`audio/pcmu`, `audio/pcma`, `audio/pcm` at 24 kHz). u-law passes through
 * untouched, so a phone call needs no transcoding on the hot path.
 */
import { TalkError } from "../../core/index.js";
import type { RealtimeSessionOptions } from "../../core/index.js";
import type { AudioFormat } from "../../core/index.js";

export type OpenAiRealtimeAudioFormat =
  { type: "audio/pcmu" } | { type: "audio/pcma" } | { type: "audio/pcm"; rate: 24000 };

/** Server VAD settings (`audio.input.turn_detection`); null disables turn detection. */
export interface OpenAiServerVad {
  type: "server_vad";
  /** 0..1; higher needs louder audio. The API's default is 0.5. */
  threshold?: number;
  prefix_padding_ms?: number;
  silence_duration_ms?: number;
  /** Start a response when the caller stops speaking. API default true. */
  create_response?: boolean;
  /** Cancel the ongoing response when the caller starts speaking. API default true. */
  interrupt_response?: boolean;
}

export interface OpenAiSemanticVad {
  type: "semantic_vad";
  eagerness?: "low" | "medium" | "high" | "auto";
  create_response?: boolean;
  interrupt_response?: boolean;
}

export type OpenAiTurnDetection = OpenAiServerVad | OpenAiSemanticVad | null;

export interface SessionUpdateSettings {
  voice: string;
  /** Model of the input transcription (`audio.input.transcription.model`); null: no caller transcript. */
  inputTranscriptionModel: string | null;
  turnDetection: OpenAiTurnDetection;
}

/** Our AudioFormat as the API's format object, or a TalkError when the API cannot carry it. */
export function toOpenAiAudioFormat(
  format: AudioFormat,
  which: "input" | "output",
): OpenAiRealtimeAudioFormat {
  if (format.channels !== 1) {
    throw new TalkError(
      "invalid_params",
      `OpenAI Realtime ${which} audio must be mono, got ${format.channels} channels.`,
    );
  }
  if (format.encoding === "g711_ulaw" && format.sampleRate === 8000) return { type: "audio/pcmu" };
  if (format.encoding === "g711_alaw" && format.sampleRate === 8000) return { type: "audio/pcma" };
  if (format.encoding === "pcm16" && format.sampleRate === 24000) return { type: "audio/pcm", rate: 24000 };
  throw new TalkError(
    "invalid_params",
    `OpenAI Realtime ${which} audio must be g711_ulaw/g711_alaw at 8 kHz or pcm16 at 24 kHz, got ${format.encoding} at ${format.sampleRate} Hz.`,
  );
}

/** The `session.update` client event for these options. */
export function buildSessionUpdate(
  options: RealtimeSessionOptions,
  settings: SessionUpdateSettings,
): Record<string, unknown> {
  const input: Record<string, unknown> = {
    format: toOpenAiAudioFormat(options.inputFormat, "input"),
    // No automatic responses (the brain reply path): no turn detection, so nothing answers by itself.
    turn_detection: options.autoRespond === false ? null : settings.turnDetection,
  };
  if (settings.inputTranscriptionModel !== null)
    input.transcription = { model: settings.inputTranscriptionModel };
  return {
    type: "session.update",
    session: {
      type: "realtime",
      output_modalities: ["audio"],
      instructions: options.instructions,
      audio: {
        input,
        output: {
          format: toOpenAiAudioFormat(options.outputFormat, "output"),
          voice: options.voice ?? settings.voice,
        },
      },
      tools: options.tools.map((tool) => ({
        type: "function",
        name: tool.name,
        description: tool.description,
        parameters: tool.parameters,
      })),
      tool_choice: "auto",
    },
  };
}
