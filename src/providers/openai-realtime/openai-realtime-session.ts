/**
 * A Gateway-owned OpenAI Realtime session over the provider's WebSocket (the
 * `connect()` half of the RealtimeProvider contract, used by the
 * gateway-relay pipeline). Speaks the GA protocol: session.update,
 * input_audio_buffer.append, response.create / cancel,
 * conversation.item.create (function_call_output), conversation.item.truncate;
 * and maps the server's events onto RealtimeProviderEvent.
 *
 * Any server speaking the same protocol works by URL: OpenAI
 * (wss://api.openai.com/v1/realtime), Azure OpenAI (its /openai/v1/realtime
 * endpoint, with `apiKeyHeader: "api-key"`), xAI's realtime API, local
 * OpenAI-compatible servers.
 */
import { cancelledError } from "../../core/index.js";
import { TalkError } from "../../core/index.js";
import { NOOP_LOGGER, type TalkLogger } from "../../core/index.js";
import { bytesPerSecond } from "../../core/index.js";
import type {
  RealtimeProviderEvent,
  RealtimeSessionOptions,
  RealtimeVoiceSession,
} from "../../core/index.js";
import { mergeOptions } from "../support/options.js";
import { JsonSocket } from "../support/json-socket.js";
import { AudioAppendBatcher } from "../support/audio-append-batcher.js";
import { buildSessionUpdate, type OpenAiTurnDetection } from "./openai-realtime-session-config.js";
import { mapServerEvent } from "./openai-realtime-session-events.js";

/** Options of a Gateway-owned OpenAI Realtime connection. */
export interface OpenAiRealtimeConnectOptions {
  /** API key sent on the WebSocket handshake. Required; never logged. */
  apiKey: string;
  /** Realtime WebSocket URL. Default "wss://api.openai.com/v1/realtime"; `?model=` is added unless present. */
  url?: string;
  /** Model when the session options name none. Default "gpt-realtime". */
  model?: string;
  /** Voice when the session options name none. Default "marin". */
  voice?: string;
  /** How the key travels: `Authorization: Bearer` (OpenAI, xAI) or `api-key` (Azure). Default "authorization". */
  apiKeyHeader?: "authorization" | "api-key";
  /** Model transcribing the caller (`audio.input.transcription`); null for none. Default "gpt-4o-mini-transcribe". */
  inputTranscriptionModel?: string | null;
  /** Turn detection; null disables it (the owner commits audio). Default { type: "server_vad" }. */
  turnDetection?: OpenAiTurnDetection;
  /** Handshake plus session.updated must complete within this, ms. Default 10 000. */
  connectTimeoutMs?: number;
  /** How long close() waits for the close handshake before dropping the socket, ms. Default 2 000. */
  closeTimeoutMs?: number;
  /** Largest server frame accepted, bytes. Default 16 MiB. */
  maxPayloadBytes?: number;
  /** The provider's name in errors and logs. Default "OpenAI Realtime". */
  label?: string;
  /**
   * `speakText` asks for an out-of-band response (`conversation: "none"`), which
   * only some servers document; false speaks it as an ordinary response. Default true.
   */
  outOfBandResponses?: boolean;
  /** Where session.update carries settings: the GA shape (`audio.input.*`) or a flat dialect's top level (xAI). Default "ga". */
  sessionShape?: "ga" | "flat";
  logger?: TalkLogger;
}

/** Builds the first `session.update` of a dialect of this protocol (OpenAI GA by default). */
export type SessionUpdateBuilder = (options: RealtimeSessionOptions) => Record<string, unknown>;

const DEFAULTS: Readonly<Required<OpenAiRealtimeConnectOptions>> = Object.freeze({
  apiKey: "",
  url: "wss://api.openai.com/v1/realtime",
  model: "gpt-realtime",
  voice: "marin",
  apiKeyHeader: "authorization",
  inputTranscriptionModel: "gpt-4o-mini-transcribe",
  turnDetection: Object.freeze({ type: "server_vad" as const }),
  connectTimeoutMs: 10_000,
  closeTimeoutMs: 2_000,
  maxPayloadBytes: 16 * 1024 * 1024,
  label: "OpenAI Realtime",
  outOfBandResponses: true,
  sessionShape: "ga",
  logger: NOOP_LOGGER,
});

/** The fixed instructions of a verbatim line; the line itself is the response's input message. */
const SPEAK_VERBATIM =
  "Read the text of the message aloud to the caller, naturally and exactly as written, as your own words. " +
  "Do not answer it, comment on it or add anything.";

function resolveOptions(
  options: OpenAiRealtimeConnectOptions,
): Readonly<Required<OpenAiRealtimeConnectOptions>> {
  const o = mergeOptions(DEFAULTS, options);
  if (typeof o.apiKey !== "string" || o.apiKey.length === 0) {
    throw new TalkError("config_invalid", `The ${o.label} connection needs an API key.`);
  }
  let url: URL;
  try {
    url = new URL(o.url);
  } catch (cause) {
    throw new TalkError("config_invalid", `Realtime url "${o.url}" is not a URL.`, { cause });
  }
  if (url.protocol !== "wss:" && url.protocol !== "ws:") {
    throw new TalkError("config_invalid", `Realtime url must be ws:// or wss://, got "${url.protocol}".`);
  }
  for (const key of ["connectTimeoutMs", "closeTimeoutMs", "maxPayloadBytes"] as const) {
    if (!Number.isInteger(o[key]) || o[key] < 1)
      throw new TalkError("config_invalid", `${key} must be a positive integer.`);
  }
  if (o.apiKeyHeader !== "authorization" && o.apiKeyHeader !== "api-key") {
    throw new TalkError("config_invalid", `apiKeyHeader must be "authorization" or "api-key".`);
  }
  return Object.freeze(o);
}

/** The URL with `model` as query parameter, unless the URL already names one (Azure deployments do). */
export function realtimeUrl(base: string, model: string): string {
  const url = new URL(base);
  if (!url.searchParams.has("model") && !url.searchParams.has("deployment"))
    url.searchParams.set("model", model);
  return url.toString();
}

/**
 * Opens a session and resolves once the server confirmed our configuration
 * (session.updated), having emitted `ready`. Rejects with `cancelled` when the
 * signal aborts first, `timeout`, `provider_unavailable` (handshake refused,
 * e.g. a bad key) or `provider_error` (the server refused the configuration).
 * Aborting the signal later closes the socket.
 */
export async function connectOpenAiRealtime(
  options: OpenAiRealtimeConnectOptions,
  sessionOptions: RealtimeSessionOptions,
  onEvent: (event: RealtimeProviderEvent) => void,
  /** The dialect's session.update (a server speaking this protocol with another session shape); default OpenAI GA. */
  sessionUpdate?: SessionUpdateBuilder,
): Promise<RealtimeVoiceSession> {
  const resolved = resolveOptions(options);
  const update = sessionUpdate
    ? sessionUpdate(sessionOptions)
    : buildSessionUpdate(sessionOptions, {
        voice: resolved.voice,
        inputTranscriptionModel: resolved.inputTranscriptionModel,
        turnDetection: resolved.turnDetection,
      });
  if (sessionOptions.signal.aborted) throw cancelledError(sessionOptions.signal);
  const session = new OpenAiRealtimeSession(resolved, sessionOptions, onEvent);
  await session.open(update);
  return session;
}

export class OpenAiRealtimeSession implements RealtimeVoiceSession {
  readonly #options: Readonly<Required<OpenAiRealtimeConnectOptions>>;
  readonly #sessionOptions: RealtimeSessionOptions;
  readonly #onEvent: (event: RealtimeProviderEvent) => void;
  readonly #log: TalkLogger;
  readonly #socket: JsonSocket;
  #activeResponseId: string | undefined;
  /** The response a response.cancel was sent for: cancelled once (a barge-in and the turn it starts both ask). */
  #cancelSentFor: string | undefined;
  #eventSeq = 0;
  readonly #input: AudioAppendBatcher;

  constructor(
    options: Readonly<Required<OpenAiRealtimeConnectOptions>>,
    sessionOptions: RealtimeSessionOptions,
    onEvent: (event: RealtimeProviderEvent) => void,
  ) {
    this.#options = options;
    this.#sessionOptions = sessionOptions;
    this.#onEvent = onEvent;
    this.#log = options.logger;
    this.#input = new AudioAppendBatcher(
      sessionOptions.inputAppendMs ?? 0,
      bytesPerSecond(sessionOptions.inputFormat),
      (audio) => this.#appendPiece(audio),
    );
    const model = sessionOptions.model ?? options.model;
    this.#socket = new JsonSocket(
      {
        url: realtimeUrl(options.url, model),
        headers:
          options.apiKeyHeader === "api-key"
            ? { "api-key": options.apiKey }
            : { Authorization: `Bearer ${options.apiKey}` },
        label: options.label,
        connectTimeoutMs: options.connectTimeoutMs,
        closeTimeoutMs: options.closeTimeoutMs,
        maxPayloadBytes: options.maxPayloadBytes,
        binaryJson: false,
        signal: sessionOptions.signal,
        logger: options.logger,
      },
      {
        setup: (event) => this.#setup(event),
        onReady: () => this.#emit({ type: "ready" }),
        onMessage: (event) => this.#handleServerEvent(event),
        onInvalidFrame: () =>
          this.#emit({
            type: "error",
            code: "invalid_provider_event",
            message: "Server sent a frame that is not a JSON object.",
            fatal: false,
          }),
        onLost: (code, reason) =>
          this.#emit({
            type: "error",
            code: "connection_lost",
            message: `${options.label} socket closed (${code} ${reason}).`,
            fatal: true,
          }),
        onFinished: (reason) => {
          this.#input.close();
          this.#activeResponseId = undefined;
          this.#emit({ type: "closed", reason });
        },
      },
    );
  }

  get state(): JsonSocket["state"] {
    return this.#socket.state;
  }

  /** Connects and configures; see connectOpenAiRealtime. */
  open(update: Record<string, unknown>): Promise<void> {
    return this.#socket.open({ ...update, event_id: this.#nextEventId() });
  }

  #setup(event: Record<string, unknown>): "ready" | TalkError | undefined {
    if (event.type === "session.updated") return "ready";
    if (event.type !== "error") return undefined;
    const error = (event.error ?? {}) as Record<string, unknown>;
    return new TalkError(
      "provider_error",
      `${this.#options.label} refused the session: ${String(error.message ?? "error")}`,
      { details: { providerCode: error.code ?? error.type ?? null } },
    );
  }

  appendAudio(data: Uint8Array, base64?: string): void {
    this.#socket.assertReady(); // refused at once, not when the piece would go out
    this.#input.push(data, base64);
  }

  /** One append: a concatenation (base64 needs no JSON escaping) instead of JSON.stringify. */
  #appendPiece(audio: string): void {
    this.#socket.sendText(`{"type":"input_audio_buffer.append","audio":"${audio}"}`);
  }

  commitAudio(): void {
    this.#send({ type: "input_audio_buffer.commit", event_id: this.#nextEventId() });
  }

  /** Cancels the response in progress; a no-op when none is (the API answers an error otherwise). */
  cancelResponse(): void {
    this.#socket.assertReady();
    if (this.#activeResponseId === undefined || this.#cancelSentFor === this.#activeResponseId) return;
    this.#cancelSentFor = this.#activeResponseId;
    this.#send({
      type: "response.cancel",
      event_id: this.#nextEventId(),
      response_id: this.#activeResponseId,
    });
  }

  truncate(itemId: string, audioEndMs: number): void {
    if (!Number.isFinite(audioEndMs) || audioEndMs < 0) {
      throw new TalkError(
        "invalid_params",
        `audioEndMs must be a finite non-negative number, got ${audioEndMs}.`,
      );
    }
    this.#send({
      type: "conversation.item.truncate",
      event_id: this.#nextEventId(),
      item_id: itemId,
      content_index: 0,
      audio_end_ms: Math.floor(audioEndMs),
    });
  }

  submitToolResult(callId: string, output: string, options: { respond?: boolean } = {}): void {
    this.#send({
      type: "conversation.item.create",
      event_id: this.#nextEventId(),
      item: { type: "function_call_output", call_id: callId, output },
    });
    if (options.respond ?? true) this.createResponse();
  }

  sendText(text: string): void {
    this.#send({
      type: "conversation.item.create",
      event_id: this.#nextEventId(),
      item: { type: "message", role: "user", content: [{ type: "input_text", text }] },
    });
    this.createResponse();
  }

  createResponse(instructions?: string): void {
    this.#send({
      type: "response.create",
      event_id: this.#nextEventId(),
      ...(instructions === undefined ? {} : { response: { instructions } }),
    });
  }

  /**
   * Speaks text verbatim. The text is content: the one message of the
   * response's own context (`response.input`), read aloud under fixed
   * instructions; it never becomes instructions itself. Out of band by
   * default (`conversation: "none"`: heard but not added to the conversation,
   * so progressive answers do not grow the context chunk by chunk, seed 002
   * option B); `remember` adds the spoken line to the conversation (a
   * greeting the model should know it said).
   */
  speakText(text: string, options: { remember?: boolean } = {}): void {
    const remember = options.remember === true;
    const message = { type: "message", role: "user", content: [{ type: "input_text", text }] };
    if (!this.#options.outOfBandResponses) {
      // A server without out-of-band responses: the line joins the conversation as a message (content,
      // never instructions), then an ordinary response reads it under the fixed instructions.
      this.#send({ type: "conversation.item.create", event_id: this.#nextEventId(), item: message });
      this.createResponse(SPEAK_VERBATIM);
      return;
    }
    this.#send({
      type: "response.create",
      event_id: this.#nextEventId(),
      response: {
        conversation: remember ? "auto" : "none",
        output_modalities: ["audio"],
        instructions: SPEAK_VERBATIM,
        input: [message],
        metadata: { talkgate: remember ? "line" : "progressive" },
      },
    });
  }

  /** Turns server-side turn detection off (null: we commit and ask for responses) or back to the configured one. */
  setTurnDetection(enabled: boolean): void {
    // A session that must not answer by itself (autoRespond: false) keeps turn detection off.
    const turnDetection =
      enabled && this.#sessionOptions.autoRespond !== false ? this.#options.turnDetection : null;
    this.#send({
      type: "session.update",
      event_id: this.#nextEventId(),
      // The GA session nests it under audio.input; a flat dialect (xAI) has it at the top.
      session:
        this.#options.sessionShape === "flat"
          ? { turn_detection: turnDetection }
          : { type: "realtime", audio: { input: { turn_detection: turnDetection } } },
    });
  }

  close(): Promise<void> {
    this.#input.close();
    return this.#socket.close("closed");
  }

  #handleServerEvent(event: Record<string, unknown>): void {
    for (const mapped of mapServerEvent(event, this.#sessionOptions.outputFormat)) {
      if (mapped.type === "response_started") this.#activeResponseId = mapped.responseId;
      if (mapped.type === "response_done" && mapped.responseId === this.#activeResponseId)
        this.#activeResponseId = undefined;
      if (mapped.type === "error")
        this.#log.warn(
          { code: mapped.code, message: mapped.message, provider: this.#options.label },
          "realtime: error event",
        );
      this.#emit(mapped);
    }
  }

  #emit(event: RealtimeProviderEvent): void {
    try {
      this.#onEvent(event);
    } catch (err) {
      // A listener that throws must not break the socket's event loop.
      this.#log.error(
        { err: String(err), event: event.type, provider: this.#options.label },
        "realtime: event listener threw",
      );
    }
  }

  #send(message: Record<string, unknown>): void {
    // Held caller audio goes first: a commit or a response must follow all of it.
    this.#input.flush();
    this.#socket.send(message);
  }

  #nextEventId(): string {
    return `evt_talkgate_${++this.#eventSeq}`;
  }
}
