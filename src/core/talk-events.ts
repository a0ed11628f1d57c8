import type { TalkBrain, TalkMode, TalkTransport } from "./talk-types.js";

/**
 * The one event envelope of every live Talk path (seed 001, "Event Contract").
 * Field names and optionality are exactly the contract's.
 */
export interface TalkEvent<TPayload = unknown> {
  id: string;
  type: TalkEventType;
  sessionId: string;
  turnId?: string;
  captureId?: string;
  /** Monotonically increasing per session, starting at 1. */
  seq: number;
  /** ISO 8601 UTC. */
  timestamp: string;
  mode: TalkMode;
  transport: TalkTransport;
  brain: TalkBrain;
  provider?: string;
  final?: boolean;
  callId?: string;
  itemId?: string;
  parentId?: string;
  source?: string;
  payload: TPayload;
}

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

/** Fields a producer sets; the sequencer fills id, seq, timestamp, mode, transport, brain, sessionId. */
export interface TalkEventInit<TPayload = unknown> {
  type: TalkEventType;
  payload: TPayload;
  turnId?: string;
  captureId?: string;
  provider?: string;
  final?: boolean;
  callId?: string;
  itemId?: string;
  parentId?: string;
  source?: string;
}

// ---------------------------------------------------------------------------
// Payload shapes of the core families. Producers may add fields; consumers
// should rely on the envelope and these documented fields.
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
  | (string & {});

export interface SessionClosedPayload {
  reason: TerminalReason;
  message?: string;
}

export interface TurnCancelledPayload {
  reason: TerminalReason;
  /** What the cancellation stopped, for diagnostics (e.g. ["stt", "agent", "tts"]). */
  aborted: string[];
}

export interface OutputAudioPayload {
  /** Metadata only: raw audio never rides in an event payload. */
  format: { encoding: string; sampleRate: number; channels: number };
  bytes: number;
  durationMs: number;
}

export interface TranscriptPayload {
  role: "user" | "assistant";
  text: string;
  speaker?: string;
}

export interface ToolCallPayload {
  name: string;
  argumentsJson: string;
}

export interface LatencyMetricsPayload {
  name: string;
  ms: number;
}
