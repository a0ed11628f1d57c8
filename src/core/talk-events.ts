import type { AudioFormat, TalkBrain, TalkMode, TalkSessionOwner, TalkTransport } from "./talk-types.js";

/** Every event type core emits, by family. */
export const TALK_EVENT_TYPES = [
  // session.*
  "session.created",
  "session.ready",
  "session.replaced",
  "session.updated",
  "session.error",
  "session.closed",
  // turn.*
  "turn.started",
  "turn.ended",
  "turn.cancelled",
  // capture.*
  "capture.started",
  "capture.stopped",
  // input.audio.*
  "input.audio.appended",
  "input.audio.committed",
  "input.audio.speech_started",
  "input.audio.speech_stopped",
  // transcript.*
  "transcript.delta",
  "transcript.done",
  // output.text.*
  "output.text.delta",
  "output.text.done",
  // output.audio.*
  "output.audio.started",
  "output.audio.delta",
  "output.audio.done",
  "output.audio.cancelled",
  "output.audio.paused",
  "output.audio.resumed",
  // tool.*
  "tool.call",
  "tool.progress",
  "tool.result",
  "tool.error",
  "tool.cancelled",
  // metrics and health
  "usage.metrics",
  "latency.metrics",
  "health.changed",
] as const;

export type TalkEventType = (typeof TALK_EVENT_TYPES)[number];

export const TALK_EVENT_TYPE_SET: ReadonlySet<string> = new Set(TALK_EVENT_TYPES);

/**
 * Families whose events are bound to a turn: the sequencer refuses to emit
 * them without a turnId (seed 001: "turnId is required for turn-bound input,
 * output, transcript, tool, and cancellation events").
 * `input.audio.appended` is not turn-bound: audio may arrive between turns.
 */
export function isTurnBound(type: TalkEventType): boolean {
  if (type === "input.audio.appended") return false;
  return (
    type.startsWith("turn.") ||
    type.startsWith("input.audio.") ||
    type.startsWith("transcript.") ||
    type.startsWith("output.") ||
    type.startsWith("tool.")
  );
}

/**
 * Events that carry the output of a turn. When their turnId is not the
 * session's active (or still-draining) turn they are stale and are dropped,
 * never delivered (stale finals and stale audio deltas are ignored).
 */
export function isTurnOutput(type: TalkEventType): boolean {
  return type.startsWith("transcript.") || type.startsWith("output.") || type === "tool.result";
}

// ---------------------------------------------------------------------------
// Payload shapes, one per event type (TalkEventPayloads). Producers may add
// fields where a shape says so (an index signature); consumers should rely on
// the envelope and these documented fields.
// ---------------------------------------------------------------------------

export type TerminalReason =
  | "completed"
  | "cancelled"
  | "barge_in"
  | "client_request"
  | "replaced"
  | "closed"
  | "timeout"
  | "error"
  | "owner_lost"
  /** A provider failed under a media leg and could not be recovered (talk.faults): the leg hung up. */
  | "provider_lost"
  // Written on start into a session log a killed process left open (session-log.ts).
  | "process_lost"
  | (string & {});

/** Events that carry nothing beyond their envelope (`capture.started`, `capture.stopped`). */
export type EmptyPayload = Record<string, never>;

export interface SessionCreatedPayload {
  owner: TalkSessionOwner;
  /** The adapter's opaque metadata (call sid, meeting id, ...). */
  metadata: Readonly<Record<string, string>>;
  /** The provider id per kind the session runs on, named or the defaults (CreateSessionOptions.providers). */
  providers?: Readonly<Partial<Record<"stt" | "tts" | "agent" | "realtime", string>>>;
  inputFormat?: AudioFormat;
  outputFormat?: AudioFormat;
}

/** `session.ready` / `session.replaced` (managed-room handover): why, e.g. "joined", "replaced". */
export interface SessionHandoverPayload {
  reason?: string;
}

/** `session.updated`: adapter state, e.g. a meeting bot's `{botId, state, subCode, participants, platform}`. */
export interface SessionUpdatedPayload {
  [field: string]: unknown;
}

/** `session.error`: a TalkError's JSON, or a provider's error as the pipeline saw it. */
export interface SessionErrorPayload {
  code: string;
  message: string;
  retryable?: boolean;
  details?: Record<string, unknown>;
  /** The provider's own error code (code is then "provider_error"). */
  upstreamCode?: string;
  /** The provider session cannot go on; the session closes with reason "error". */
  fatal?: boolean;
}

export interface SessionClosedPayload {
  reason: TerminalReason;
  message?: string;
}

export interface TurnStartedPayload {
  /** Who started the turn (e.g. "user", "greeting"), when the starter said so. */
  source?: string;
}

export interface TurnEndedPayload {
  reason: TerminalReason;
}

export interface TurnCancelledPayload {
  reason: TerminalReason;
  /** What the cancellation stopped, for diagnostics (e.g. ["stt", "agent", "tts"]). */
  aborted: string[];
}

/** `input.audio.appended` / `input.audio.committed`: how much caller audio, never the audio itself. */
export interface InputAudioPayload {
  bytes: number;
  durationMs?: number;
}

export interface SpeechStartedPayload {
  /** Where speech started in the input stream, ms, when the detector says. */
  audioStartMs?: number;
}

export interface SpeechStoppedPayload {
  /** Where speech stopped in the input stream, ms, when the detector says. */
  audioEndMs?: number;
  /** The silence after the speech that ended the turn, ms, when a local end-of-turn rule decided it. */
  endpointMs?: number;
}

/**
 * `transcript.delta` / `transcript.done`. Producers may add fields: adapters
 * tag `speaker` / `trackId` / `rtpSource`, typed input carries its metadata
 * (e.g. `{input: "dtmf", digits}`).
 */
export interface TranscriptPayload {
  role: "user" | "assistant";
  text: string;
  speaker?: string;
  trackId?: string;
  rtpSource?: number;
  /** On a delta: the text replaces the turn's partial so far instead of extending it. */
  replace?: boolean;
  [field: string]: unknown;
}

/** `output.text.delta` / `output.text.done`. */
export interface OutputTextPayload {
  text: string;
}

/** Metadata of an audio format as events carry it. */
export interface AudioFormatInfo {
  encoding: string;
  sampleRate: number;
  channels: number;
}

export interface OutputAudioStartedPayload {
  format: AudioFormatInfo;
}

export interface OutputAudioPayload {
  /** Metadata only: raw audio never rides in an event payload. */
  format: AudioFormatInfo;
  bytes: number;
  durationMs: number;
}

/** `output.audio.delta`: a TTS queue adds which segment (chunk) of the answer the audio belongs to. */
export interface OutputAudioDeltaPayload extends OutputAudioPayload {
  segment?: number;
  /** On the first delta of each segment: the text being spoken, so captions can follow the audio. */
  segmentText?: string;
}

export interface OutputAudioCancelledPayload {
  reason: TerminalReason;
}

/**
 * `output.audio.paused`: caller speech over the answer, held until its words decide (talk.input.bargeIn
 * .confirmWithWords): the line was cleared at `heardMs` of the item, the rest is kept.
 */
export interface OutputAudioPausedPayload {
  reason: "barge_in";
  /** Audio of the item heard when it was paused, ms: where it resumes. */
  heardMs: number;
}

/** `output.audio.resumed`: the held answer plays on from `fromMs`: the speech was a backchannel or had no words. */
export interface OutputAudioResumedPayload {
  reason: "backchannel" | "no_words";
  fromMs: number;
}

export interface ToolCallPayload {
  name: string;
  argumentsJson: string;
}

/** `tool.progress`: what a long-running tool reports while it works. */
export interface ToolProgressPayload {
  name: string;
  message?: string;
  [field: string]: unknown;
}

export interface ToolResultPayload {
  name: string;
  output: string;
}

export interface ToolErrorPayload {
  name: string;
  code: string;
  message: string;
}

export interface ToolCancelledPayload {
  name: string;
  /** Whether the tool had started running when it was cancelled. */
  started: boolean;
  reason: string;
}

/**
 * `usage.metrics`: a provider's usage report (envelope `provider`: its id,
 * except a realtime session's own provider): token counts when it gives them;
 * for a call to a recognizer, synthesizer or agent its `kind` ("stt", "tts",
 * "agent") and `sttSeconds` (audio heard) or `ttsCharacters` (text spoken).
 */
export interface UsageMetricsPayload {
  inputTokens?: number;
  outputTokens?: number;
  kind?: string;
  sttSeconds?: number;
  ttsCharacters?: number;
  [field: string]: unknown;
}

/** `latency.metrics`: one measured interval; adapters add what measured it (e.g. `detector`). */
export interface LatencyMetricsPayload {
  name: string;
  ms: number;
  [field: string]: unknown;
}

/**
 * `health.changed`: a provider's or an adapter's health. A provider's (envelope
 * `provider`: its id): `{ok: false, kind, code, message}` when its requests fail,
 * `{ok: true, kind}` when it works again (`kind`: stt, tts, agent, realtime); a
 * meeting bot's fatal end `{ok: false, botId, state, subCode}`.
 */
export interface HealthChangedPayload {
  ok?: boolean;
  [field: string]: unknown;
}

/** The payload type of each event type: what `session.emit` checks and what narrowing by `type` gives. */
export interface TalkEventPayloads {
  "session.created": SessionCreatedPayload;
  "session.ready": SessionHandoverPayload;
  "session.replaced": SessionHandoverPayload;
  "session.updated": SessionUpdatedPayload;
  "session.error": SessionErrorPayload;
  "session.closed": SessionClosedPayload;
  "turn.started": TurnStartedPayload;
  "turn.ended": TurnEndedPayload;
  "turn.cancelled": TurnCancelledPayload;
  "capture.started": EmptyPayload;
  "capture.stopped": EmptyPayload;
  "input.audio.appended": InputAudioPayload;
  "input.audio.committed": InputAudioPayload;
  "input.audio.speech_started": SpeechStartedPayload;
  "input.audio.speech_stopped": SpeechStoppedPayload;
  "transcript.delta": TranscriptPayload;
  "transcript.done": TranscriptPayload;
  "output.text.delta": OutputTextPayload;
  "output.text.done": OutputTextPayload;
  "output.audio.started": OutputAudioStartedPayload;
  "output.audio.delta": OutputAudioDeltaPayload;
  "output.audio.done": OutputAudioPayload;
  "output.audio.cancelled": OutputAudioCancelledPayload;
  "output.audio.paused": OutputAudioPausedPayload;
  "output.audio.resumed": OutputAudioResumedPayload;
  "tool.call": ToolCallPayload;
  "tool.progress": ToolProgressPayload;
  "tool.result": ToolResultPayload;
  "tool.error": ToolErrorPayload;
  "tool.cancelled": ToolCancelledPayload;
  "usage.metrics": UsageMetricsPayload;
  "latency.metrics": LatencyMetricsPayload;
  "health.changed": HealthChangedPayload;
}

/** The envelope's optional correlation fields: what a producer may set besides `type` and `payload`. */
export interface TalkEventCorrelation {
  turnId?: string;
  captureId?: string;
  provider?: string;
  final?: boolean;
  callId?: string;
  itemId?: string;
  parentId?: string;
  source?: string;
}

/**
 * The envelope fields besides `type` and `payload` (seed 001, "Event
 * Contract"): what the sequencer fills, plus the correlation fields. Field
 * names and optionality are exactly the contract's.
 */
export interface TalkEventEnvelope extends TalkEventCorrelation {
  id: string;
  sessionId: string;
  /** Monotonically increasing per session, starting at 1. */
  seq: number;
  /** ISO 8601 UTC. */
  timestamp: string;
  mode: TalkMode;
  transport: TalkTransport;
  brain: TalkBrain;
}

/** One event of type `T`: the envelope with that type's payload. */
export interface TalkEventOf<T extends TalkEventType> extends TalkEventEnvelope {
  type: T;
  payload: TalkEventPayloads[T];
}

/**
 * The one event of every live Talk path: a union discriminated by `type`, so
 * `if (event.type === "transcript.done") event.payload.text` needs no cast.
 * `TalkEvent<"a" | "b">` is the union of those types' events.
 */
export type TalkEvent<T extends TalkEventType = TalkEventType> = T extends TalkEventType
  ? TalkEventOf<T>
  : never;

/** Fields a producer sets for one event of type `T`; the sequencer fills id, seq, timestamp, mode, transport, brain, sessionId. */
export interface TalkEventInitOf<T extends TalkEventType> extends TalkEventCorrelation {
  type: T;
  payload: TalkEventPayloads[T];
}

/** What a producer hands to `session.emit`: a union discriminated by `type`, like TalkEvent. */
export type TalkEventInit<T extends TalkEventType = TalkEventType> = T extends TalkEventType
  ? TalkEventInitOf<T>
  : never;
