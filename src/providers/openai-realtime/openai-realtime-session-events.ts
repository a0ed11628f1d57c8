/**
 * Maps OpenAI Realtime (GA) server events onto the provider-neutral
 * RealtimeProviderEvent. Events we do not report (session.created,
 * rate_limits.updated, output_item.added, ...) map to nothing. A known event
 * missing a field we need maps to a non-fatal `invalid_provider_event` error
 * rather than throwing: one odd event must not end a call.
 */
import type { RealtimeProviderEvent } from "../../core/index.js";
import type { AudioFormat } from "../../core/index.js";

type Json = Record<string, unknown>;

function str(obj: Json, key: string): string | undefined {
  const v = obj[key];
  return typeof v === "string" ? v : undefined;
}

function num(obj: Json, key: string): number | undefined {
  const v = obj[key];
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

function obj(o: Json, key: string): Json | undefined {
  const v = o[key];
  return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Json) : undefined;
}

function invalid(type: string, missing: string): RealtimeProviderEvent {
  return {
    type: "error",
    code: "invalid_provider_event",
    message: `${type} without ${missing}`,
    fatal: false,
  };
}

const RESPONSE_STATUSES = new Set(["completed", "cancelled", "failed", "incomplete"]);

/**
 * Provider events for one parsed server event. `outputFormat` labels audio
 * deltas (the format we asked for in session.update).
 */
export function mapServerEvent(event: Json, outputFormat: AudioFormat): RealtimeProviderEvent[] {
  const type = str(event, "type") ?? "";
  switch (type) {
    case "input_audio_buffer.speech_started":
      return [
        { type: "speech_started", audioStartMs: num(event, "audio_start_ms"), itemId: str(event, "item_id") },
      ];
    case "input_audio_buffer.speech_stopped":
      return [
        { type: "speech_stopped", audioEndMs: num(event, "audio_end_ms"), itemId: str(event, "item_id") },
      ];
    case "response.created": {
      const id = str(obj(event, "response") ?? {}, "id");
      return id === undefined
        ? [invalid(type, "response.id")]
        : [{ type: "response_started", responseId: id }];
    }
    case "response.output_audio.delta": {
      const responseId = str(event, "response_id");
      const itemId = str(event, "item_id");
      const delta = str(event, "delta");
      if (responseId === undefined || itemId === undefined || delta === undefined)
        return [invalid(type, "response_id/item_id/delta")];
      const buf = Buffer.from(delta, "base64");
      return [
        {
          type: "audio_delta",
          responseId,
          itemId,
          data: new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength),
          format: outputFormat,
        },
      ];
    }
    case "response.output_audio.done": {
      const responseId = str(event, "response_id");
      const itemId = str(event, "item_id");
      if (responseId === undefined || itemId === undefined) return [invalid(type, "response_id/item_id")];
      return [{ type: "audio_done", responseId, itemId }];
    }
    case "response.output_text.delta": {
      const responseId = str(event, "response_id");
      const itemId = str(event, "item_id");
      const delta = str(event, "delta");
      if (responseId === undefined || itemId === undefined || delta === undefined)
        return [invalid(type, "response_id/item_id/delta")];
      return [{ type: "text_delta", responseId, itemId, text: delta, role: "assistant" }];
    }
    case "response.output_audio_transcript.delta":
    case "conversation.item.input_audio_transcription.delta": {
      const itemId = str(event, "item_id");
      const delta = str(event, "delta");
      if (itemId === undefined || delta === undefined) return [invalid(type, "item_id/delta")];
      const role = type.startsWith("response.") ? "assistant" : "user";
      return [{ type: "transcript_delta", itemId, text: delta, role }];
    }
    case "response.output_audio_transcript.done":
    case "conversation.item.input_audio_transcription.completed": {
      const itemId = str(event, "item_id");
      const transcript = str(event, "transcript");
      if (itemId === undefined || transcript === undefined) return [invalid(type, "item_id/transcript")];
      const role = type.startsWith("response.") ? "assistant" : "user";
      return [{ type: "transcript_done", itemId, text: transcript, role }];
    }
    case "response.function_call_arguments.done": {
      const responseId = str(event, "response_id");
      const itemId = str(event, "item_id");
      const callId = str(event, "call_id");
      const name = str(event, "name");
      const args = str(event, "arguments");
      if (
        responseId === undefined ||
        itemId === undefined ||
        callId === undefined ||
        name === undefined ||
        args === undefined
      ) {
        return [invalid(type, "response_id/item_id/call_id/name/arguments")];
      }
      return [{ type: "tool_call", responseId, itemId, callId, name, argumentsJson: args }];
    }
    case "response.done": {
      const response = obj(event, "response");
      const id = response === undefined ? undefined : str(response, "id");
      const status = response === undefined ? undefined : str(response, "status");
      if (
        response === undefined ||
        id === undefined ||
        status === undefined ||
        !RESPONSE_STATUSES.has(status)
      ) {
        return [invalid(type, "response.id/status")];
      }
      const out: RealtimeProviderEvent[] = [];
      const usage = obj(response, "usage");
      if (usage !== undefined) {
        out.push({
          type: "usage",
          inputTokens: num(usage, "input_tokens"),
          outputTokens: num(usage, "output_tokens"),
          responseId: id,
        });
      }
      out.push({
        type: "response_done",
        responseId: id,
        status: status as "completed" | "cancelled" | "failed" | "incomplete",
      });
      return out;
    }
    case "error": {
      const error = obj(event, "error") ?? {};
      const code = str(error, "code") ?? str(error, "type") ?? "provider_error";
      // "Most errors are recoverable and the session will stay open": a refused request is only reported;
      // a server_error means the model failed, and the answer in progress with it.
      const server = str(error, "type") === "server_error";
      return [
        {
          type: "error",
          code,
          message: str(error, "message") ?? "The provider reported an error.",
          fatal: false,
          ...(server ? { server } : {}),
        },
      ];
    }
    default:
      return [];
  }
}
