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
import WebSocket from "ws";
import { cancelledError } from "../../core/index.js";
import { TalkError } from "../../core/index.js";
import { NOOP_LOGGER, type TalkLogger } from "../../core/index.js";
import type {
  RealtimeProviderEvent,
  RealtimeSessionOptions,
  RealtimeVoiceSession,
} from "../../core/index.js";
import { mergeOptions } from "../support/options.js";
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
  logger?: TalkLogger;
}

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
  logger: NOOP_LOGGER,
});

type State = "connecting" | "ready" | "closing" | "closed";

function resolveOptions(
  options: OpenAiRealtimeConnectOptions,
): Readonly<Required<OpenAiRealtimeConnectOptions>> {
  const o = mergeOptions(DEFAULTS, options);
  if (typeof o.apiKey !== "string" || o.apiKey.length === 0) {
    throw new TalkError("config_invalid", "The OpenAI Realtime connection needs an API key.");
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
): Promise<RealtimeVoiceSession> {
  const resolved = resolveOptions(options);
  const update = buildSessionUpdate(sessionOptions, {
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
  #ws: WebSocket | undefined;
  #state: State = "connecting";
  #closing: Promise<void> | undefined;
  #activeResponseId: string | undefined;
  #eventSeq = 0;
  #onAbort = (): void => void this.#shutdown("aborted");

  constructor(
    options: Readonly<Required<OpenAiRealtimeConnectOptions>>,
    sessionOptions: RealtimeSessionOptions,
    onEvent: (event: RealtimeProviderEvent) => void,
  ) {
    this.#options = options;
    this.#sessionOptions = sessionOptions;
    this.#onEvent = onEvent;
    this.#log = options.logger;
  }

  get state(): State {
    return this.#state;
  }

  /** Connects and configures; see connectOpenAiRealtime. */
  open(update: Record<string, unknown>): Promise<void> {
    const { signal } = this.#sessionOptions;
    const model = this.#sessionOptions.model ?? this.#options.model;
    const headers: Record<string, string> =
      this.#options.apiKeyHeader === "api-key"
        ? { "api-key": this.#options.apiKey }
        : { Authorization: `Bearer ${this.#options.apiKey}` };
    const ws = new WebSocket(realtimeUrl(this.#options.url, model), {
      headers,
      maxPayload: this.#options.maxPayloadBytes,
      handshakeTimeout: this.#options.connectTimeoutMs,
      // ws offers permessage-deflate by default: a server that accepts it would make every 20 ms audio frame
      // (base64, barely compressible) pay zlib both ways and hold a zlib context per call. Never offered.
      perMessageDeflate: false,
    });
    this.#ws = ws;
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const fail = (err: TalkError): void => {
        if (settled) return;
        settled = true;
        cleanup();
        ws.removeAllListeners("message");
        ws.on("error", () => {}); // errors while tearing down are expected
        ws.terminate();
        this.#state = "closed";
        reject(err);
      };
      const onAbort = (): void => fail(cancelledError(signal));
      const timer = setTimeout(
        () =>
          fail(
            new TalkError(
              "timeout",
              `OpenAI Realtime did not become ready within ${this.#options.connectTimeoutMs} ms.`,
            ),
          ),
        this.#options.connectTimeoutMs,
      );
      const cleanup = (): void => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
      };
      signal.addEventListener("abort", onAbort, { once: true });

      ws.on("open", () => ws.send(JSON.stringify({ ...update, event_id: this.#nextEventId() })));
      ws.on("error", (err: Error) => {
        const status = /Unexpected server response: (\d+)/.exec(err.message)?.[1];
        if (!settled) {
          fail(
            new TalkError("provider_unavailable", `OpenAI Realtime connection failed: ${err.message}`, {
              cause: err,
              ...(status ? { details: { status: Number(status) } } : {}),
            }),
          );
          return;
        }
        this.#log.warn({ err: err.message }, "openai realtime: socket error");
      });
      ws.on("close", (code: number, reason: Buffer) => {
        if (!settled) {
          fail(
            new TalkError(
              "provider_unavailable",
              `OpenAI Realtime closed the connection during setup (${code}).`,
            ),
          );
          return;
        }
        this.#onSocketClosed(code, reason.toString("utf8"));
      });
      ws.on("message", (data: WebSocket.RawData, isBinary: boolean) => {
        if (isBinary) return;
        const event = parseJson(data);
        if (event === undefined) {
          this.#emit({
            type: "error",
            code: "invalid_provider_event",
            message: "Server sent a frame that is not a JSON object.",
            fatal: false,
          });
          return;
        }
        if (!settled) {
          if (event.type === "session.updated") {
            settled = true;
            cleanup();
            this.#state = "ready";
            signal.addEventListener("abort", this.#onAbort, { once: true });
            this.#emit({ type: "ready" });
            resolve();
          } else if (event.type === "error") {
            const error = (event.error ?? {}) as Record<string, unknown>;
            fail(
              new TalkError(
                "provider_error",
                `OpenAI Realtime refused the session: ${String(error.message ?? "error")}`,
                {
                  details: { providerCode: error.code ?? error.type ?? null },
                },
              ),
            );
          }
          return;
        }
        this.#handleServerEvent(event);
      });
    });
  }

  appendAudio(data: Uint8Array): void {
    this.#send({
      type: "input_audio_buffer.append",
      audio: Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("base64"),
    });
  }

  commitAudio(): void {
    this.#send({ type: "input_audio_buffer.commit", event_id: this.#nextEventId() });
  }

  /** Cancels the response in progress; a no-op when none is (the API answers an error otherwise). */
  cancelResponse(): void {
    this.#assertReady();
    if (this.#activeResponseId === undefined) return;
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
   * Speaks Gateway-written text as an out-of-band response (`conversation:
   * "none"`): it is heard but not added to the conversation, so progressive
   * answers do not grow the context chunk by chunk (seed 002, option B).
   */
  speakText(text: string): void {
    this.#send({
      type: "response.create",
      event_id: this.#nextEventId(),
      response: {
        conversation: "none",
        output_modalities: ["audio"],
        instructions:
          "Say the following text to the caller, naturally and exactly as written, as the continuation of your answer. " +
          "Do not add anything.\n\n" +
          text,
        metadata: { talkgate: "progressive" },
      },
    });
  }

  close(): Promise<void> {
    return this.#shutdown("closed");
  }

  #shutdown(reason: string): Promise<void> {
    if (this.#closing !== undefined) return this.#closing;
    this.#sessionOptions.signal.removeEventListener("abort", this.#onAbort);
    const ws = this.#ws;
    if (this.#state === "closed" || ws === undefined) {
      this.#state = "closed";
      this.#closing = Promise.resolve();
      return this.#closing;
    }
    this.#state = "closing";
    this.#closing = new Promise<void>((resolve) => {
      const timer = setTimeout(() => ws.terminate(), this.#options.closeTimeoutMs);
      ws.once("close", () => {
        clearTimeout(timer);
        resolve();
      });
      if (ws.readyState === WebSocket.CLOSED) {
        clearTimeout(timer);
        resolve();
      } else {
        ws.close(1000, reason);
      }
    }).then(() => {
      this.#finish(reason);
    });
    return this.#closing;
  }

  #onSocketClosed(code: number, reason: string): void {
    if (this.#state === "closing" || this.#state === "closed") return;
    // The provider or the network ended the session; the owner must end the call or reconnect.
    this.#sessionOptions.signal.removeEventListener("abort", this.#onAbort);
    this.#closing = Promise.resolve();
    this.#emit({
      type: "error",
      code: "connection_lost",
      message: `OpenAI Realtime socket closed (${code} ${reason}).`,
      fatal: true,
    });
    this.#finish(`socket closed (${code})`);
  }

  #finish(reason: string): void {
    if (this.#state === "closed") return;
    this.#state = "closed";
    this.#activeResponseId = undefined;
    this.#emit({ type: "closed", reason });
  }

  #handleServerEvent(event: Record<string, unknown>): void {
    for (const mapped of mapServerEvent(event, this.#sessionOptions.outputFormat)) {
      if (mapped.type === "response_started") this.#activeResponseId = mapped.responseId;
      if (mapped.type === "response_done" && mapped.responseId === this.#activeResponseId)
        this.#activeResponseId = undefined;
      if (mapped.type === "error")
        this.#log.warn({ code: mapped.code, message: mapped.message }, "openai realtime: error event");
      this.#emit(mapped);
    }
  }

  #emit(event: RealtimeProviderEvent): void {
    try {
      this.#onEvent(event);
    } catch (err) {
      // A listener that throws must not break the socket's event loop.
      this.#log.error({ err: String(err), event: event.type }, "openai realtime: event listener threw");
    }
  }

  #assertReady(): void {
    if (this.#state !== "ready")
      throw new TalkError("invalid_state", `The realtime session is ${this.#state}.`);
  }

  #send(message: Record<string, unknown>): void {
    this.#assertReady();
    this.#ws!.send(JSON.stringify(message));
  }

  #nextEventId(): string {
    return `evt_talkgate_${++this.#eventSeq}`;
  }
}

function parseJson(data: WebSocket.RawData): Record<string, unknown> | undefined {
  try {
    const text = Array.isArray(data)
      ? Buffer.concat(data).toString("utf8")
      : Buffer.from(data as ArrayBuffer).toString("utf8");
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
