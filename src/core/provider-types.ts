import type { AudioChunk } from "./audio-chunk.js";
import type { AudioFormat, TalkMode, TalkTransport } from "./talk-types.js";

/**
 * Provider contracts. Vendor wire protocols live in src/providers behind these
 * interfaces; core sees only the contracts and the capability declarations.
 * `talk.catalog` is built from the declarations, never from provider ids.
 *
 * Every async operation takes an AbortSignal: aborting it must stop the
 * underlying work (close the socket, kill the process, end the HTTP stream),
 * not merely make the result ignored.
 */

export type ProviderKind = "realtime" | "stt" | "tts" | "agent";

export interface ProviderCapabilities {
  /** Modes a session can run in with this provider. */
  modes?: TalkMode[];
  /** Transports this provider can serve. */
  transports?: TalkTransport[];
  models?: string[];
  voices?: string[];
  inputFormats?: AudioFormat[];
  outputFormats?: AudioFormat[];
  /** Mints short-lived client credentials for client-owned sessions (talk.client.create). */
  clientSessions?: boolean;
  /** Can be driven by the Gateway over a relay (talk.session.create gateway-relay). */
  gatewayRelay?: boolean;
  /** Runs on this machine without network or keys. */
  local?: boolean;
  /** Produces partial results / audio while working. */
  streaming?: boolean;
  /** Supports server-side cancellation of a response (realtime). */
  responseCancel?: boolean;
  /** Supports truncating assistant audio at the heard position (realtime). */
  truncate?: boolean;
  /**
   * Realtime: a Gateway-owned session runs with the provider's turn detection off from the start
   * (`autoRespond: false`), the owner committing the caller's audio and asking for each answer
   * (commitAudio, createResponse): talk.input.turnEnd "talkgate". False: such a session is refused
   * (capability_unsupported); absent: not known, allowed (the owner's explicit turns, push-to-talk).
   */
  ownerTurns?: boolean;
  /** Calls tools natively (realtime function calling; an agent's function calls). */
  tools?: boolean;
  /** What tool definitions this provider accepts; the canonical tools are exported through it (default: the common subset). */
  toolSchema?: ToolSchemaProfile;
  /**
   * Realtime: the reply paths (seed 003) its Gateway-owned sessions can run.
   * `bridge` needs `sendText` (local STT text in, the provider plans and
   * calls tools); `brain` needs `speakText` and `autoRespond: false` (the
   * provider only speaks text it is given). Absent: `native` only.
   */
  replyPaths?: readonly RealtimeReplyPath[];
}

/** Who plans a realtime session's replies (seed 003); see pipelines/brain-options.ts. */
export type RealtimeReplyPath = "native" | "bridge" | "brain";

/**
 * Limits of a provider's function declarations. Core's canonical tool schemas
 * are sanitized through this when offered to the provider; the provider
 * declares it, core never branches on who the provider is.
 */
export interface ToolSchemaProfile {
  /** Longest function name. Default 64. */
  maxNameLength?: number;
  /** Longest description; longer ones are cut. Default 1024. */
  maxDescriptionLength?: number;
  /** JSON Schema keywords kept (recursively); others are removed. Default: a conservative common subset. */
  keywords?: readonly string[];
}

export interface ProviderHealth {
  ok: boolean;
  detail?: string;
}

export interface ProviderDescriptor {
  readonly id: string;
  readonly kind: ProviderKind;
  /** Human-readable name for catalogs and logs. */
  readonly label: string;
  readonly capabilities: ProviderCapabilities;
  /** Cheap readiness check (binary present, endpoint configured); must not throw. */
  health(): Promise<ProviderHealth>;
  /** Releases long-lived resources (pools, sockets). Idempotent. */
  close?(): Promise<void>;
}

// ---------------------------------------------------------------------------
// Text to speech
// ---------------------------------------------------------------------------

export interface TtsRequest {
  text: string;
  voice?: string;
  /** Speaking rate, 1.0 = normal. */
  speed?: number;
  /** The format the caller would like; the provider may answer in another and says so per chunk. */
  format?: AudioFormat;
  signal: AbortSignal;
}

export interface TtsProvider extends ProviderDescriptor {
  readonly kind: "tts";
  /**
   * Streams synthesized audio in order: PCM chunks (at a rate and layout the provider names per chunk),
   * or encoded ones only when asked for that `format`. Aborting the signal stops synthesis.
   */
  synthesize(request: TtsRequest): AsyncIterable<AudioChunk>;
}

// ---------------------------------------------------------------------------
// Speech to text (streaming)
// ---------------------------------------------------------------------------

export interface SttStreamOptions {
  /** Format of the PCM written to the stream. */
  format: AudioFormat;
  language?: string;
  signal: AbortSignal;
  /** Called with the running hypothesis when the provider has one. */
  onPartial?(text: string): void;
  /**
   * The caller decides on the words while the speaker is still talking (a barge-in confirmed by words): a
   * provider that can report running hypotheses inside an utterance, at a cost it otherwise saves, does so.
   * Default false.
   */
  eagerPartials?: boolean;
}

export interface SttResult {
  text: string;
  /** 0..1 when the provider reports it. */
  confidence?: number;
}

export interface SttStream {
  /** Appends PCM16 samples in the stream's format. Throws after finish/abort. */
  write(pcm: Int16Array): void;
  /** Ends the input and resolves with the final transcript. Rejects with `cancelled` when aborted. */
  finish(): Promise<SttResult>;
  /**
   * Optional: the speaker has paused (the caller's own detector heard no voice for a while, whatever the
   * line's noise). A recognizer that gives running words only at pauses it finds itself may give them now.
   */
  pause?(): void;
  /** Optional: the speaker's voice is back after pause(): the words at the pause are not the last ones. */
  resume?(): void;
}

export interface SttProvider extends ProviderDescriptor {
  readonly kind: "stt";
  startStream(options: SttStreamOptions): SttStream;
}

// ---------------------------------------------------------------------------
// Agent consult (the brain)
// ---------------------------------------------------------------------------

export interface AgentMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string;
  /** role "assistant": the tools it called in this message (its content may then be empty). */
  toolCalls?: AgentToolCall[];
  /** role "tool": the call this message is the result of. */
  toolCallId?: string;
}

/** One function call an agent asked for: complete (its arguments as a JSON text), in the order asked. */
export interface AgentToolCall {
  callId: string;
  name: string;
  argumentsJson: string;
}

export interface AgentConsultRequest {
  sessionId: string;
  turnId: string;
  /** Built by the Gateway from trusted config and session context; never from a request. */
  messages: AgentMessage[];
  /**
   * Tools the agent may call (an agent declaring `capabilities.tools`): the
   * canonical registry's export under the session's policy. Absent or empty:
   * the agent answers in text only.
   */
  tools?: RealtimeToolDefinition[];
  signal: AbortSignal;
}

/** What one consult used, as the agent reported it (an agent that reports nothing leaves it out). */
export interface AgentUsage {
  inputTokens?: number;
  outputTokens?: number;
}

/** A consult streams text, then possibly tool calls (each complete), then `done`. */
export type AgentDelta =
  | { type: "text"; text: string }
  | ({ type: "tool_call" } & AgentToolCall)
  | { type: "done"; finishReason?: string; usage?: AgentUsage };

export interface AgentProvider extends ProviderDescriptor {
  readonly kind: "agent";
  consult(request: AgentConsultRequest): AsyncIterable<AgentDelta>;
}

// ---------------------------------------------------------------------------
// Realtime voice (speech to speech)
// ---------------------------------------------------------------------------

export interface RealtimeToolDefinition {
  name: string;
  description: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
}

export interface RealtimeSessionOptions {
  model?: string;
  voice?: string;
  /** Instructions built by the Gateway from trusted config. */
  instructions: string;
  tools: RealtimeToolDefinition[];
  inputFormat: AudioFormat;
  outputFormat: AudioFormat;
  signal: AbortSignal;
  /**
   * Default true. False (the `brain` reply path): the provider never answers
   * by itself, neither at the end of the caller's speech nor otherwise, and
   * `setTurnDetection(true)` does not bring that back; it speaks only what
   * `speakText` gives it.
   */
  autoRespond?: boolean;
  /**
   * The session may gather the caller's audio into pieces of this many
   * ms before sending it (one provider message per piece instead of one per
   * 20 ms frame); anything else it sends goes after what it holds. 0 or
   * absent: every piece as it comes.
   */
  inputAppendMs?: number;
}

/** Events a realtime provider session reports to its owner. */
export type RealtimeProviderEvent =
  | { type: "ready" }
  | { type: "speech_started"; audioStartMs?: number; itemId?: string }
  | { type: "speech_stopped"; audioEndMs?: number; itemId?: string }
  | { type: "response_started"; responseId: string }
  | { type: "audio_delta"; responseId: string; itemId: string; data: Uint8Array; format: AudioFormat }
  | { type: "audio_done"; responseId: string; itemId: string }
  | { type: "text_delta"; responseId: string; itemId: string; text: string; role: "assistant" }
  | { type: "transcript_delta"; itemId: string; text: string; role: "user" | "assistant" }
  | { type: "transcript_done"; itemId: string; text: string; role: "user" | "assistant" }
  | {
      type: "tool_call";
      responseId: string;
      itemId: string;
      callId: string;
      name: string;
      argumentsJson: string;
    }
  | { type: "response_done"; responseId: string; status: "completed" | "cancelled" | "failed" | "incomplete" }
  | { type: "usage"; inputTokens?: number; outputTokens?: number; [key: string]: unknown }
  | {
      type: "error";
      /** The provider's code; `connection_lost` when its connection ended under the session. */
      code: string;
      message: string;
      /** The provider session cannot go on. */
      fatal: boolean;
      /** The provider itself failed (not a request it refused): the answer in progress is lost. */
      server?: boolean;
    }
  | { type: "closed"; reason: string };

export interface RealtimeVoiceSession {
  /**
   * Input audio in the session's input format. `base64`, when given, is the
   * same bytes already base64-encoded (a carrier frame's payload, checked
   * strictly at the edge): a provider whose wire is base64 sends it as is
   * instead of encoding `data` again. `data` is the caller's: a session that
   * keeps audio past the call (holding it for a piece) copies it, so the
   * relay hands over each frame without a copy of its own.
   */
  appendAudio(data: Uint8Array, base64?: string): void;
  commitAudio?(): void;
  cancelResponse(): void;
  /** Truncates the assistant item at the audio the user actually heard. */
  truncate(itemId: string, audioEndMs: number): void;
  submitToolResult(callId: string, output: string, options?: { respond?: boolean }): void;
  /** Asks the provider to answer now, with Gateway-built instructions when given (never text from a request). */
  createResponse(instructions?: string): void;
  /**
   * Optional: speaks `text` verbatim, passed to the provider as content (a
   * message), never as instructions. By default the response is kept out of
   * the conversation history, so progressive answers do not grow the
   * provider's context (seed 002, option B); `remember: true` adds the spoken
   * line to the conversation (a greeting the model should know it said).
   * Reports the usual response_started / audio / response_done events.
   */
  speakText?(text: string, options?: { remember?: boolean }): void;
  /**
   * Optional: turns the provider's own end-of-speech detection off (`false`:
   * the owner commits audio and asks for the response, push-to-talk) or back
   * on (`true`: the provider ends turns and answers by itself). Providers
   * without it always detect turns themselves.
   */
  setTurnDetection?(enabled: boolean): void;
  /** Adds a user text message to the conversation and asks for a response (keypad input, typed text). */
  sendText?(text: string): void;
  close(): Promise<void>;
}

export interface ClientSessionRequest {
  model?: string;
  voice?: string;
  instructions: string;
  tools: RealtimeToolDefinition[];
  transport: TalkTransport;
  signal: AbortSignal;
}

export interface ClientSessionGrant {
  /** Short-lived credential for the client to reach the provider. */
  clientSecret: string;
  expiresAt: string;
  /** Where the client connects (SDP endpoint or WebSocket URL). */
  endpoint?: string;
  model?: string;
  voice?: string;
  /**
   * How the client presents `clientSecret` when the endpoint does not take it
   * as a bearer key: a query parameter or a WebSocket subprotocol, by name.
   */
  credentialIn?: { query: string } | { subprotocolPrefix: string };
  /**
   * The first message the client must send on the provider socket, when the
   * credential is not bound to a configuration: the Gateway-built session
   * configuration (instructions, tools, voice), so the Gateway still owns it.
   */
  clientConfig?: Record<string, unknown>;
}

export interface RealtimeProvider extends ProviderDescriptor {
  readonly kind: "realtime";
  /** Opens a Gateway-owned provider session (gateway-relay). */
  connect?(
    options: RealtimeSessionOptions,
    onEvent: (event: RealtimeProviderEvent) => void,
  ): Promise<RealtimeVoiceSession>;
  /** Mints a client credential for a client-owned session (webrtc / provider-websocket). */
  createClientSession?(request: ClientSessionRequest): Promise<ClientSessionGrant>;
}

export type TalkProvider = TtsProvider | SttProvider | AgentProvider | RealtimeProvider;
