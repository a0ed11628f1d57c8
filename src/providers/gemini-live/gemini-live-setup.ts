/**
 * The first message of a Gemini Live session (`setup`, a
 * BidiGenerateContentSetup) and the audio formats the Live API carries:
 * raw little-endian PCM16, 16 kHz in (`realtimeInput.audio` with mimeType
 * `audio/pcm;rate=16000`), 24 kHz out (`inlineData` of mimeType
 * `audio/pcm;rate=24000`). Sources: https://ai.google.dev/api/live
 * ("Session configuration", BidiGenerateContentSetup) and
 * https://ai.google.dev/gemini-api/docs/live ("Audio formats").
 */
import { TalkError } from "../../core/index.js";
import type { AudioFormat, RealtimeSessionOptions, RealtimeToolDefinition } from "../../core/index.js";

export const GEMINI_INPUT_FORMAT: AudioFormat = Object.freeze({
  encoding: "pcm16",
  sampleRate: 16000,
  channels: 1,
});
export const GEMINI_OUTPUT_FORMAT: AudioFormat = Object.freeze({
  encoding: "pcm16",
  sampleRate: 24000,
  channels: 1,
});

/** `realtimeInputConfig.activityHandling`: whether caller speech stops the model (the API's default). */
export type GeminiActivityHandling = "START_OF_ACTIVITY_INTERRUPTS" | "NO_INTERRUPTION";

export interface GeminiSetupSettings {
  /** Model id without the `models/` prefix. */
  model: string;
  voice: string;
  activityHandling: GeminiActivityHandling;
  /** Transcribe the caller (`inputAudioTranscription`) and the model (`outputAudioTranscription`). */
  transcription: boolean;
}

/** Checks that `format` is one the Live API carries in direction `which`. */
export function assertGeminiFormat(format: AudioFormat, which: "input" | "output"): void {
  const expected = which === "input" ? GEMINI_INPUT_FORMAT : GEMINI_OUTPUT_FORMAT;
  if (
    format.encoding !== expected.encoding ||
    format.sampleRate !== expected.sampleRate ||
    format.channels !== 1
  ) {
    throw new TalkError(
      "invalid_params",
      `Gemini Live ${which} audio must be mono pcm16 at ${expected.sampleRate} Hz, got ${format.encoding} at ${format.sampleRate} Hz.`,
    );
  }
}

/**
 * Function declarations as the Live API takes them
 * (`tools[].functionDeclarations`). A tool's parameters are JSON Schema
 * (lower-case types, `additionalProperties`...), so they go as
 * `parametersJsonSchema`: `parameters` is Gemini's own Schema (upper-case
 * `Type`, a subset of OpenAPI without `additionalProperties`), which the API
 * refuses JSON Schema in ("Unknown name \"additionalProperties\" ... Cannot find
 * field", 400). The two are mutually exclusive. Sources: the API reference
 * (FunctionDeclaration) and @google/genai's `FunctionDeclaration` type.
 */
export function geminiTools(tools: readonly RealtimeToolDefinition[]): Record<string, unknown>[] {
  if (tools.length === 0) return [];
  return [
    {
      functionDeclarations: tools.map((t) => ({
        name: t.name,
        description: t.description,
        parametersJsonSchema: t.parameters,
      })),
    },
  ];
}

/** The body of `setup` (BidiGenerateContentSetup) for a Gateway-owned or a token-bound session. */
export function buildGeminiSetup(
  options: Pick<RealtimeSessionOptions, "instructions" | "tools" | "voice" | "autoRespond">,
  settings: GeminiSetupSettings,
): Record<string, unknown> {
  return {
    model: `models/${settings.model}`,
    generationConfig: {
      responseModalities: ["AUDIO"],
      speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: options.voice ?? settings.voice } } },
    },
    systemInstruction: { parts: [{ text: options.instructions }] },
    tools: geminiTools(options.tools),
    realtimeInputConfig: {
      // No automatic responses (the brain reply path): without activity detection the model
      // answers only a turn we complete (the text it is asked to read aloud).
      automaticActivityDetection: { disabled: options.autoRespond === false },
      activityHandling: settings.activityHandling,
    },
    ...(settings.transcription ? { inputAudioTranscription: {}, outputAudioTranscription: {} } : {}),
  };
}
