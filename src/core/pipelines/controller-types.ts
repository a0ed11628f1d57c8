import type { TerminalReason } from "../talk-events.js";
import type { AudioChunk } from "../provider-types.js";
import type { TalkSession, TalkTurn } from "../session-types.js";

/**
 * Where a Gateway-owned session's assistant audio goes. The owner of the
 * session's media (a gateway connection, a phone call, a meeting bot) supplies
 * one; the pipeline writes audio in order and clears it on barge-in.
 */
export interface TalkAudioSink {
  /** Assistant audio, in order. Must not block; buffering is the sink's concern. */
  write(chunk: AudioChunk, meta: { turnId: string; itemId: string }): void;
  /** Drops audio buffered but not yet played (barge-in, cancelOutput, cancelTurn). */
  clear(meta: { turnId: string; itemId?: string; reason: TerminalReason }): void;
  /**
   * Optional: resolves once the listener has heard everything written for
   * `itemId` (a phone line confirms playback with marks). Pipelines wait for
   * it before `output.audio.done`, so an answer still playing on the line is
   * still the active output and caller speech can interrupt it. Resolves at
   * once when the signal aborts. Absent: written counts as heard.
   */
  drained?(itemId: string, signal: AbortSignal): Promise<void>;
  /**
   * Optional: audio of `itemId` the listener has actually heard, ms, clamped
   * to the audio written. A realtime pipeline truncates the provider's item
   * there when the output is cancelled, so the model knows what was heard.
   */
  heardMs?(itemId: string): number;
}

/**
 * Optional verbs of a controller beyond the talk.session.* API, used by
 * surface adapters: a greeting or farewell spoken as is, and text input from
 * the user (keypad digits, typed text) answered like speech.
 */
export interface TalkTextInput {
  /** Speaks `text` verbatim as the assistant, in a turn of its own; returns that turn's id when known at once. */
  say(text: string): void;
  /**
   * Text from the user: a turn whose transcript is `text` (payload fields of
   * `meta` added), answered by the brain. Interrupts output that is playing.
   */
  sendUserText(text: string, meta?: Record<string, string>): void;
}

/**
 * Drives one Gateway-owned session: it owns the provider work behind the
 * session (realtime relay, STT -> agent -> TTS, or transcription) and applies
 * the session verbs under the core cancellation contract. Gateway handlers and
 * surface adapters call these verbs; they never talk to providers directly.
 */
export interface TalkSessionController {
  readonly session: TalkSession;
  /**
   * Input audio as bytes in the session's input format (the wire path, and
   * encoded passthrough such as u-law to a u-law realtime provider). Throws
   * invalid_audio / payload_too_large / session_closed. `base64`: the same
   * bytes base64-encoded, when the caller has them so (RealtimeVoiceSession.appendAudio).
   */
  appendAudio(data: Uint8Array, base64?: string): void;
  /**
   * Input audio as samples, when the session's input format is PCM16: the
   * path of adapters that decode at the edge (no PCM -> bytes -> PCM round
   * trip). Same errors as appendAudio; invalid_audio for an encoded input format.
   */
  appendPcm(pcm: Int16Array): void;
  startTurn(): TalkTurn;
  /** Ends the user turn; for stt-tts this finalizes STT and starts the answer. Rejects stale_turn. */
  endTurn(turnId: string): Promise<void>;
  cancelTurn(turnId: string | undefined, reason: TerminalReason): boolean;
  cancelOutput(turnId: string | undefined, reason: TerminalReason): boolean;
  /** Completes a provider tool call emitted in this session. Throws tool_not_found. */
  submitToolResult(callId: string, output: string): void;
  /** Replaces where assistant audio goes (e.g. after talk.session.join from another connection). */
  setAudioSink(sink: TalkAudioSink | undefined): void;
  /** Closes provider work and the session. Idempotent. */
  close(reason: TerminalReason): Promise<void>;
}
