/**
 * Maps Gemini Live server messages onto the provider-neutral
 * RealtimeProviderEvent. The Live API has no response or item ids, no
 * speech-started event and no cancel, so this keeps the turn state the
 * events need:
 *
 * - the caller's turn starts at the first `inputTranscription` (or at
 *   `interrupted`: the server's own activity detection heard the caller over
 *   the model) -> `speech_started`; it ends when the model starts answering ->
 *   `transcript_done` (user) and `speech_stopped`;
 * - a model turn is a response with ids made here: its first audio, text or
 *   `outputTranscription` -> `response_started`; `modelTurn.parts[].inlineData`
 *   -> `audio_delta`; `generationComplete` -> `audio_done`; `turnComplete` ->
 *   `transcript_done` (assistant) and `response_done`;
 * - `interrupted` ends the model turn `cancelled` (the server stopped
 *   generating and keeps only what it had sent);
 * - `toolCall.functionCalls[]` -> one `tool_call` each, and the response
 *   that made them ends (the model answers in a new one after `toolResponse`);
 * - a response cancelled by the owner (`cancel()`) is dropped here: the API
 *   cannot stop it, so its remaining audio is discarded until its turn ends;
 * - `usageMetadata` -> `usage`.
 *
 * A message missing what it needs maps to a non-fatal `invalid_provider_event`.
 * Source: https://ai.google.dev/api/live (BidiGenerateContentServerMessage).
 */
import type { AudioFormat, RealtimeProviderEvent } from "../../core/index.js";

type Json = Record<string, unknown>;

function obj(o: Json, key: string): Json | undefined {
  const v = o[key];
  return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Json) : undefined;
}

function invalid(message: string): RealtimeProviderEvent {
  return { type: "error", code: "invalid_provider_event", message, fatal: false };
}

interface ModelTurn {
  responseId: string;
  itemId: string;
  transcript: string;
  audio: boolean;
  audioDone: boolean;
  /** The owner cancelled it: nothing more of it is reported but its end. */
  cancelled: boolean;
}

export class GeminiTurnTracker {
  readonly #output: AudioFormat;
  #seq = 0;
  #user: { itemId: string; transcript: string } | undefined;
  #model: ModelTurn | undefined;
  /** `interrupted` was seen: the turnComplete that follows ends the interrupted model turn, not the caller's. */
  #interrupted = false;
  /** Tool call id -> function name (a toolResponse must name the function). */
  readonly callNames = new Map<string, string>();

  constructor(outputFormat: AudioFormat) {
    this.#output = outputFormat;
  }

  /** The owner cancelled the model turn in progress; false when there is none. */
  cancel(): boolean {
    if (!this.#model || this.#model.cancelled) return false;
    this.#model.cancelled = true;
    return true;
  }

  /** Events for one server message (setupComplete, goAway and the like map to nothing). */
  map(message: Json): RealtimeProviderEvent[] {
    const out: RealtimeProviderEvent[] = [];
    const content = obj(message, "serverContent");
    if (message.serverContent !== undefined && !content) out.push(invalid("serverContent is not an object"));
    if (content) this.#content(content, out);
    const toolCall = obj(message, "toolCall");
    if (message.toolCall !== undefined && !toolCall) out.push(invalid("toolCall is not an object"));
    if (toolCall) this.#toolCall(toolCall, out);
    const usage = obj(message, "usageMetadata");
    if (usage) {
      const n = (k: string): number | undefined =>
        typeof usage[k] === "number" ? (usage[k] as number) : undefined;
      out.push({ type: "usage", inputTokens: n("promptTokenCount"), outputTokens: n("responseTokenCount") });
    }
    return out;
  }

  #content(content: Json, out: RealtimeProviderEvent[]): void {
    const input = obj(content, "inputTranscription");
    if (input && typeof input.text === "string" && input.text !== "") {
      this.#userSpeaking(out);
      this.#user!.transcript += input.text;
      out.push({ type: "transcript_delta", itemId: this.#user!.itemId, text: input.text, role: "user" });
    }
    if (content.interrupted === true) {
      // The server's activity detection heard the caller over the model and stopped it.
      this.#userSpeaking(out);
      this.#interrupted = true;
      this.#endModel("cancelled", out);
    }
    const turn = obj(content, "modelTurn");
    if (content.modelTurn !== undefined && !turn) out.push(invalid("modelTurn is not an object"));
    if (turn) this.#modelParts(turn, out);
    const transcription = obj(content, "outputTranscription");
    if (transcription && typeof transcription.text === "string" && transcription.text !== "") {
      const model = this.#modelTurn(out);
      model.transcript += transcription.text;
      if (!model.cancelled)
        out.push({
          type: "transcript_delta",
          itemId: model.itemId,
          text: transcription.text,
          role: "assistant",
        });
    }
    if (content.generationComplete === true && this.#model?.audio && !this.#model.audioDone) {
      this.#model.audioDone = true;
      if (!this.#model.cancelled)
        out.push({ type: "audio_done", responseId: this.#model.responseId, itemId: this.#model.itemId });
    }
    if (content.turnComplete === true) {
      this.#endModel(this.#model?.cancelled ? "cancelled" : "completed", out);
      if (this.#interrupted) this.#interrupted = false;
      else this.#endUser(out);
    }
  }

  #modelParts(turn: Json, out: RealtimeProviderEvent[]): void {
    const parts = turn.parts;
    if (!Array.isArray(parts)) {
      out.push(invalid("modelTurn without parts"));
      return;
    }
    for (const part of parts as unknown[]) {
      if (typeof part !== "object" || part === null) {
        out.push(invalid("modelTurn part is not an object"));
        continue;
      }
      const p = part as Json;
      const inline = obj(p, "inlineData");
      if (inline) {
        this.#audio(inline, out);
      } else if (typeof p.text === "string" && p.thought !== true) {
        const model = this.#modelTurn(out);
        if (!model.cancelled)
          out.push({
            type: "text_delta",
            responseId: model.responseId,
            itemId: model.itemId,
            text: p.text,
            role: "assistant",
          });
      }
    }
  }

  #audio(inline: Json, out: RealtimeProviderEvent[]): void {
    const mime = typeof inline.mimeType === "string" ? inline.mimeType : "";
    if (typeof inline.data !== "string") {
      out.push(invalid("inlineData without data"));
      return;
    }
    const rate = /^audio\/pcm(?:;\s*rate=(\d+))?$/.exec(mime);
    if (!rate || (rate[1] !== undefined && Number(rate[1]) !== this.#output.sampleRate)) {
      out.push(
        invalid(
          `inlineData of type "${mime.slice(0, 60)}", expected audio/pcm;rate=${this.#output.sampleRate}`,
        ),
      );
      return;
    }
    const model = this.#modelTurn(out);
    if (model.cancelled) return;
    model.audio = true;
    const buf = Buffer.from(inline.data, "base64");
    if (buf.byteLength % 2 !== 0) {
      out.push(invalid("inlineData audio of an odd number of bytes"));
      return;
    }
    out.push({
      type: "audio_delta",
      responseId: model.responseId,
      itemId: model.itemId,
      data: new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength),
      format: this.#output,
    });
  }

  #toolCall(toolCall: Json, out: RealtimeProviderEvent[]): void {
    const calls = toolCall.functionCalls;
    if (!Array.isArray(calls)) {
      out.push(invalid("toolCall without functionCalls"));
      return;
    }
    const model = this.#modelTurn(out);
    for (const call of calls as unknown[]) {
      const c = (typeof call === "object" && call !== null ? call : {}) as Json;
      if (typeof c.id !== "string" || typeof c.name !== "string") {
        out.push(invalid("functionCall without id or name"));
        continue;
      }
      const args = c.args === undefined ? {} : c.args;
      if (typeof args !== "object" || args === null || Array.isArray(args)) {
        out.push(invalid(`functionCall ${c.name} with args that are not an object`));
        continue;
      }
      this.callNames.set(c.id, c.name);
      out.push({
        type: "tool_call",
        responseId: model.responseId,
        itemId: `${model.responseId}_call_${c.id}`,
        callId: c.id,
        name: c.name,
        argumentsJson: JSON.stringify(args),
      });
    }
    // The model answers the results in a new turn of its own.
    this.#endModel("completed", out);
  }

  #userSpeaking(out: RealtimeProviderEvent[]): void {
    if (this.#user) return;
    this.#user = { itemId: this.#id("user"), transcript: "" };
    out.push({ type: "speech_started", itemId: this.#user.itemId });
  }

  #endUser(out: RealtimeProviderEvent[]): void {
    const user = this.#user;
    if (!user) return;
    this.#user = undefined;
    out.push({ type: "transcript_done", itemId: user.itemId, text: user.transcript, role: "user" });
    out.push({ type: "speech_stopped", itemId: user.itemId });
  }

  #modelTurn(out: RealtimeProviderEvent[]): ModelTurn {
    if (this.#model) return this.#model;
    // The model answers: the caller's turn is over.
    this.#endUser(out);
    const responseId = this.#id("resp");
    this.#model = {
      responseId,
      itemId: this.#id("item"),
      transcript: "",
      audio: false,
      audioDone: false,
      cancelled: false,
    };
    out.push({ type: "response_started", responseId });
    return this.#model;
  }

  #endModel(status: "completed" | "cancelled", out: RealtimeProviderEvent[]): void {
    const model = this.#model;
    if (!model) return;
    this.#model = undefined;
    if (status === "completed" && !model.cancelled) {
      if (model.audio && !model.audioDone)
        out.push({ type: "audio_done", responseId: model.responseId, itemId: model.itemId });
      if (model.transcript !== "")
        out.push({
          type: "transcript_done",
          itemId: model.itemId,
          text: model.transcript,
          role: "assistant",
        });
    }
    out.push({
      type: "response_done",
      responseId: model.responseId,
      status: model.cancelled ? "cancelled" : status,
    });
  }

  #id(prefix: string): string {
    return `gemini_${prefix}_${++this.#seq}`;
  }
}
