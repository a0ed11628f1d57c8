import { z } from "zod";
import { AUDIO_ENCODINGS, TALK_BRAINS, TALK_MODES, TALK_TRANSPORTS } from "../../core/index.js";
import type { AudioFormat, SessionProviders, TalkBrain, TalkMode, TalkTransport } from "../../core/index.js";

/**
 * The public Talk API (seed 000, "Final Gateway API"): method names, parameter
 * schemas and result shapes. This module is the single source of truth for
 * the method list; the server's registry and the typed client are both built
 * from it. Every params object is strict: unknown keys (for example
 * request-time instructions) are rejected with `invalid_params`.
 */

export const TALK_METHODS = [
  "talk.catalog",
  "talk.config",
  "talk.speak",
  "talk.mode",
  "talk.client.create",
  "talk.client.toolCall",
  "talk.client.cancelToolCall",
  "talk.session.create",
  "talk.session.join",
  "talk.session.appendAudio",
  "talk.session.startTurn",
  "talk.session.endTurn",
  "talk.session.cancelTurn",
  "talk.session.cancelOutput",
  "talk.session.submitToolResult",
  "talk.session.callTool",
  "talk.session.close",
] as const;

export type TalkMethod = (typeof TALK_METHODS)[number];

const id = z.string().min(1).max(128);
const reason = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9_.-]+$/, "lowercase letters, digits, _ . -");

export const audioFormatSchema = z.strictObject({
  encoding: z.enum(AUDIO_ENCODINGS),
  sampleRate: z.number().int().min(8000).max(48_000),
  channels: z.number().int().min(1).max(2),
});

const empty = z.strictObject({});

/** The longest one output item may have played, ms (an hour: far past any spoken answer). */
export const MAX_PLAYED_MS = 3_600_000;

/**
 * What the client has played of the assistant's audio, as a phone carrier's
 * echoed marks tell it: of the output `itemId` (a `talk.audio` frame's), the
 * ms its speaker has played from that item's first sample (not what it
 * received). The Gateway truncates a cancelled answer there, so the model
 * knows what the user heard, and judges from it whether audio still plays.
 * Carried by appendAudio and the verbs that stop an answer (startTurn,
 * cancelOutput, cancelTurn); positions of an item the session no longer
 * knows are ignored, and a position past what was sent counts as all of it.
 */
export const playbackSchema = z.strictObject({
  itemId: z.string().min(1).max(256),
  playedMs: z.number().finite().min(0).max(MAX_PLAYED_MS),
});

export type PlaybackPosition = z.output<typeof playbackSchema>;

export const TALK_PARAM_SCHEMAS = {
  "talk.catalog": empty,
  "talk.config": empty,
  "talk.speak": z.strictObject({
    // The upper bound is the configured maxSpeakChars, checked by the handler.
    text: z.string().min(1),
    voice: z.string().min(1).max(128).optional(),
    speed: z.number().min(0.25).max(4).optional(),
    format: audioFormatSchema.optional(),
  }),
  // No params reads the mode; `enabled` sets it and broadcasts `talk.mode`.
  "talk.mode": z.strictObject({
    enabled: z.boolean().optional(),
    phase: z.string().min(1).max(64).optional(),
  }),
  "talk.client.create": z.strictObject({
    /** Omitted: talk.realtime.mode / .transport / .brain where they fit, else realtime / agent-consult. */
    mode: z.enum(TALK_MODES).optional(),
    transport: z.enum(TALK_TRANSPORTS).optional(),
    brain: z.enum(TALK_BRAINS).optional(),
    provider: id.optional(),
    model: z.string().min(1).max(128).optional(),
    voice: z.string().min(1).max(128).optional(),
  }),
  "talk.client.toolCall": z.strictObject({
    sessionId: id,
    callId: z.string().min(1).max(256),
    name: z.string().min(1).max(128),
    argumentsJson: z.string(),
  }),
  "talk.client.cancelToolCall": z.strictObject({
    sessionId: id,
    callId: z.string().min(1).max(256),
    reason: reason.optional(),
  }),
  "talk.session.create": z.strictObject({
    /** Omitted: talk.realtime.mode / .transport / .brain where they fit (session-shape.ts). */
    mode: z.enum(TALK_MODES).optional(),
    transport: z.enum(TALK_TRANSPORTS).optional(),
    /** Omitted: talk.realtime.brain where it fits, else `none` for transcription and `agent-consult` otherwise. */
    brain: z.enum(TALK_BRAINS).optional(),
    provider: id.optional(),
    model: z.string().min(1).max(128).optional(),
    voice: z.string().min(1).max(128).optional(),
    inputFormat: audioFormatSchema.optional(),
    outputFormat: audioFormatSchema.optional(),
    /**
     * Client-completed tools `[{name, description?, parameters}]` (realtime only),
     * checked by the handler against tool policy so errors name the field.
     */
    clientTools: z.unknown().optional(),
    /** Realtime only: who plans replies (seed 003), latched for the session. Omitted: agent.realtime.replyPath. */
    replyPath: z.enum(["native", "bridge", "brain"]).optional(),
    /**
     * The client will report its playback (`playback` on appendAudio and the cancel verbs): its reports,
     * not the writes, say what was heard from the first audio on, so an answer sent faster than it plays is
     * still playing before the first report arrives. Omitted (false): sent audio counts as played until a
     * first report.
     */
    playbackReports: z.boolean().optional(),
  }),
  "talk.session.join": z.strictObject({
    sessionId: id,
    joinToken: z.string().min(1).max(256),
    /** Replays events with seq > afterSeq; default 0 replays everything still held. */
    afterSeq: z.number().int().min(0).default(0),
  }),
  "talk.session.appendAudio": z.strictObject({
    sessionId: id,
    audioBase64: z.string().min(1),
    timestamp: z.number().finite().optional(),
    playback: playbackSchema.optional(),
  }),
  "talk.session.startTurn": z.strictObject({ sessionId: id, playback: playbackSchema.optional() }),
  "talk.session.endTurn": z.strictObject({ sessionId: id, turnId: id }),
  "talk.session.cancelTurn": z.strictObject({
    sessionId: id,
    turnId: id.optional(),
    reason: reason.optional(),
    playback: playbackSchema.optional(),
  }),
  "talk.session.cancelOutput": z.strictObject({
    sessionId: id,
    turnId: id.optional(),
    reason: reason.optional(),
    playback: playbackSchema.optional(),
  }),
  "talk.session.submitToolResult": z.strictObject({
    sessionId: id,
    callId: z.string().min(1).max(256),
    output: z.string(),
  }),
  /** direct-tools sessions: the surface calls a tool by name (scope direct-tools). */
  "talk.session.callTool": z.strictObject({
    sessionId: id,
    name: z.string().min(1).max(128),
    /** The tool's arguments as a JSON object; default none (`{}`). */
    argumentsJson: z
      .string()
      .max(64 * 1024)
      .default("{}"),
    /** The turn the call answers (ended, current); absent: a turn of its own. */
    turnId: id.optional(),
  }),
  "talk.session.close": z.strictObject({ sessionId: id, reason: reason.optional() }),
} as const satisfies Record<TalkMethod, z.ZodType>;

export type TalkParams<M extends TalkMethod> = z.input<(typeof TALK_PARAM_SCHEMAS)[M]>;
export type TalkParsedParams<M extends TalkMethod> = z.output<(typeof TALK_PARAM_SCHEMAS)[M]>;

// ---------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------

export interface TalkModeState {
  enabled: boolean;
  phase?: string;
  /** ISO 8601 UTC of the last change. */
  updatedAt: string;
}

export interface SpeakResult {
  format: AudioFormat;
  audioBase64: string;
  bytes: number;
  durationMs: number;
}

export interface ClientCreateResult {
  sessionId: string;
  mode: TalkMode;
  transport: TalkTransport;
  brain: TalkBrain;
  provider: string;
  /** Short-lived provider credential; the only secret the client ever receives. */
  clientSecret: string;
  expiresAt: string;
  endpoint?: string;
  model?: string;
  voice?: string;
  /** How the client presents clientSecret when it is not a bearer key (query parameter or subprotocol). */
  credentialIn?: { query: string } | { subprotocolPrefix: string };
  /** The message to send first on the provider socket when the credential is not bound to a configuration. */
  clientConfig?: Record<string, unknown>;
  /** Tool names the Gateway declared to the provider (policy already applied). */
  tools: string[];
}

/** A direct tool call's result; its spoken answer follows as events. */
export interface DirectToolCallResult {
  sessionId: string;
  /** The turn it answered (the one given, or the one opened for it). */
  turnId: string;
  callId: string;
  output: string;
}

export interface ToolCallResult {
  sessionId: string;
  callId: string;
  output: string;
}

export interface SessionDescription {
  sessionId: string;
  mode: TalkMode;
  transport: TalkTransport;
  brain: TalkBrain;
  /** The named provider, else a realtime session's or a transcription's default one. */
  provider?: string;
  /** The provider id per kind the session runs on, named or the defaults (`{stt, tts, agent}`, `{realtime}`, `{stt}`). */
  providers?: SessionProviders;
  /** Highest seq emitted so far. */
  seq: number;
}

export interface SessionCreateResult extends SessionDescription {
  /** Plaintext join token: returned here only, the server keeps a hash. */
  joinToken: string;
}

export interface SessionJoinResult extends SessionDescription {
  /** Events with seq > afterSeq that follow this response as `talk.event` frames. */
  replayed: number;
  /** False when the replay buffer no longer held every event after afterSeq. */
  complete: boolean;
}

export interface TalkResults {
  "talk.catalog": unknown;
  "talk.config": unknown;
  "talk.speak": SpeakResult;
  "talk.mode": TalkModeState;
  "talk.client.create": ClientCreateResult;
  "talk.client.toolCall": ToolCallResult;
  "talk.client.cancelToolCall": { sessionId: string; callId: string; cancelled: boolean };
  "talk.session.create": SessionCreateResult;
  "talk.session.join": SessionJoinResult;
  "talk.session.appendAudio": { sessionId: string; bytes: number };
  "talk.session.startTurn": { sessionId: string; turnId: string };
  "talk.session.endTurn": { sessionId: string; turnId: string };
  "talk.session.cancelTurn": { sessionId: string; cancelled: boolean };
  "talk.session.cancelOutput": { sessionId: string; cancelled: boolean };
  "talk.session.submitToolResult": { sessionId: string; callId: string };
  "talk.session.callTool": DirectToolCallResult;
  "talk.session.close": { sessionId: string; closed: true };
}

export type TalkResult<M extends TalkMethod> = TalkResults[M];

/** The typed method map: params the caller sends, result it receives. */
export type TalkMethodMap = { [M in TalkMethod]: { params: TalkParams<M>; result: TalkResult<M> } };

/** Payload of a `talk.audio` event frame (assistant audio of a Gateway-owned session). */
export interface TalkAudioPayload {
  sessionId: string;
  turnId: string;
  itemId: string;
  format: AudioFormat;
  audioBase64: string;
}

export function isTalkMethod(name: string): name is TalkMethod {
  return (TALK_METHODS as readonly string[]).includes(name);
}
