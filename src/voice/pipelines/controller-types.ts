import type { TerminalReason } from "../../core/index.js";
import type { AudioChunk } from "../../core/index.js";
import type { TalkOutput, TalkSession, TalkTurn } from "../../core/index.js";

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
   * to the audio written; undefined while the listener has said nothing (a
   * Talk API client that reports no playback). A realtime pipeline truncates
   * the provider's item there when the output is cancelled, so the model
   * knows what was heard.
   */
  heardMs?(itemId: string): number | undefined;
  /**
   * Optional: whether the listener still plays audio written to it, whichever output it was (a Talk API
   * client's estimate from its playback reports). A media leg clears such a tail on barge-in. Absent: false.
   */
  playingOut?(): boolean;
}

/** A speech-to-text stream outside any turn: the words of speech over a held answer. */
export interface WordProbe {
  /** Caller audio in the controller's input format. */
  write(pcm: Int16Array): void;
  /** Ends the stream and resolves with its final text ("" when it failed); no more running text. Idempotent. */
  finish(): Promise<string>;
}

/**
 * Optional verbs of a controller whose answer can be held and resumed (stt-tts: the TTS queue keeps what
 * it wrote): how a media leg confirms a barge-in with words (talk.input.bargeIn.confirmWithWords).
 */
export interface TalkOutputHold {
  /** Holds the active output (the sink cleared at the heard position, the rest kept). False: it cannot be held. */
  holdOutput(): boolean;
  /** Plays the held output on from where it was heard. False when nothing is held. */
  resumeOutput(reason: "backchannel" | "no_words"): boolean;
  /** Starts a recognizer on speech over the active output; `onText` gets its running text. Undefined: none. */
  probeWords(onText: (text: string) => void): WordProbe | undefined;
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

/** One tool the session's trusted surface calls directly (talk.session.callTool). */
export interface DirectToolCall {
  name: string;
  argumentsJson: string;
  /**
   * The turn the call answers: the session's current turn, its user input
   * ended (a spoken turn after endTurn). Absent: the call opens a turn of its
   * own, which supersedes output still playing.
   */
  turnId?: string | undefined;
}

export interface DirectToolResult {
  turnId: string;
  callId: string;
  /** The tool's output, as in `tool.result`. */
  output: string;
}

/**
 * The verb of a `direct-tools` session (talk.session.callTool): its trusted
 * surface calls a tool by name, under policy, and the result answers the
 * turn (direct-tools-turns.ts). Rejects with the call's error code.
 */
export interface TalkDirectTools {
  callTool(request: DirectToolCall): Promise<DirectToolResult>;
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
  /**
   * Barge-in, decided by the media leg's policy: the one interruption sequence on `output` (the sink
   * cleared first, one terminal event: `output.audio.cancelled`, or `turn.cancelled` while the turn's tool
   * or agent still runs; the provider's response cancelled and its item truncated at the heard position;
   * TTS drained). False when `output` no longer plays. Absent (transcription): nothing ever plays.
   */
  interrupt?(output: TalkOutput): boolean;
  /** Completes a provider tool call emitted in this session. Throws tool_not_found. */
  submitToolResult(callId: string, output: string): void;
  /** Replaces where assistant audio goes (e.g. after talk.session.join from another connection). */
  setAudioSink(sink: TalkAudioSink | undefined): void;
  /**
   * Optional: the client says it played `playedMs` of `itemId` (its `playback` report, before the verb
   * it came with runs): a Talk API client's leg aligns its echo reference by it.
   */
  playbackReported?(position: { itemId: string; playedMs: number }): void;
  /** Closes provider work and the session. Idempotent. */
  close(reason: TerminalReason): Promise<void>;
}
