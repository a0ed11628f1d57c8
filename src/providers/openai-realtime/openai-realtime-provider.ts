import { TalkError } from "../../core/index.js";
import { NOOP_LOGGER, type TalkLogger } from "../../core/index.js";
import type {
  ClientSessionGrant,
  ClientSessionRequest,
  ProviderCapabilities,
  ProviderHealth,
  RealtimeProvider,
  RealtimeProviderEvent,
  RealtimeSessionOptions,
  RealtimeVoiceSession,
} from "../../core/index.js";
import { PCM16_24K, ULAW_8K, type AudioFormat } from "../../core/index.js";
import { mergeOptions } from "../support/options.js";
import { mintClientSecret } from "./openai-client-secrets.js";
import type { OpenAiTurnDetection } from "./openai-realtime-session-config.js";
import { connectOpenAiRealtime } from "./openai-realtime-session.js";

const ALAW_8K: AudioFormat = Object.freeze({ encoding: "g711_alaw", sampleRate: 8000, channels: 1 });
/** What the API carries: PCM16 24 kHz first (what PCM sessions are converted to), then G.711 passthrough. */
const REALTIME_FORMATS: readonly AudioFormat[] = Object.freeze([PCM16_24K, ULAW_8K, ALAW_8K]);

/** Voices the OpenAI Realtime API documents for speech output. */
export const OPENAI_REALTIME_VOICES = Object.freeze([
  "alloy",
  "ash",
  "ballad",
  "coral",
  "echo",
  "sage",
  "shimmer",
  "verse",
  "marin",
  "cedar",
]);

/** Options of the OpenAI Realtime provider; the lead maps `talk.realtime.providers.openai` into it. */
export interface OpenAiRealtimeOptions {
  /** Provider id in the registry and catalog. Default "openai". */
  id?: string;
  /** API base URL including the version path. Default "https://api.openai.com/v1". */
  baseUrl?: string;
  /** Server-side API key. Default "" (the provider is then unhealthy and refuses to mint). Never echoed. */
  apiKey?: string;
  /** Realtime model used when a request names none. Default "gpt-realtime". */
  model?: string;
  /** Voice used when a request names none. Default "marin". */
  voice?: string;
  /** Models advertised in the catalog. Default [model]. */
  models?: string[];
  /** Voices advertised in the catalog and accepted in requests. Default OPENAI_REALTIME_VOICES. */
  voices?: string[];
  /** Lifetime of minted client secrets, seconds, 10..7200. Default 600 (the API's own default). */
  clientSecretTtlSeconds?: number;
  /** Upper bound on each HTTP request, ms. Default 10 000. */
  requestTimeoutMs?: number;
  /**
   * Realtime WebSocket URL of Gateway-owned sessions. Default: baseUrl with
   * ws(s):// and "/realtime" appended (wss://api.openai.com/v1/realtime).
   */
  realtimeUrl?: string;
  /** How the key travels on the WebSocket: "authorization" (OpenAI, xAI) or "api-key" (Azure). Default "authorization". */
  apiKeyHeader?: "authorization" | "api-key";
  /** Model transcribing the caller in Gateway-owned sessions; null for none. Default "gpt-4o-mini-transcribe". */
  inputTranscriptionModel?: string | null;
  /** Turn detection of Gateway-owned sessions; null lets the owner commit audio. Default { type: "server_vad" }. */
  turnDetection?: OpenAiTurnDetection;
  /** WebSocket handshake plus session.updated, ms. Default 10 000. */
  connectTimeoutMs?: number;
  logger?: TalkLogger;
}

const DEFAULTS: Readonly<Required<OpenAiRealtimeOptions>> = Object.freeze({
  id: "openai",
  baseUrl: "https://api.openai.com/v1",
  apiKey: "",
  model: "gpt-realtime",
  voice: "marin",
  models: [],
  voices: [...OPENAI_REALTIME_VOICES],
  clientSecretTtlSeconds: 600,
  requestTimeoutMs: 10_000,
  realtimeUrl: "",
  apiKeyHeader: "authorization",
  inputTranscriptionModel: "gpt-4o-mini-transcribe",
  // The relay decides about barge-in itself (greeting protection, interruptOnSpeech) and cancels the
  // response on speech_started; the server must not cancel on its own behind our back.
  turnDetection: Object.freeze({ type: "server_vad" as const, interrupt_response: false }),
  connectTimeoutMs: 10_000,
  logger: NOOP_LOGGER,
});

/**
 * OpenAI Realtime behind the RealtimeProvider contract: it mints client
 * secrets for client-owned sessions (talk.client.create over WebRTC or the
 * provider WebSocket) and opens Gateway-owned sessions over the Realtime
 * WebSocket (`connect`, gateway-relay: phone calls, relayed browser audio).
 * G.711 u-law / a-law at 8 kHz are declared, so a phone call's audio passes
 * through untouched.
 */
export class OpenAiRealtimeProvider implements RealtimeProvider {
  readonly kind = "realtime" as const;
  readonly id: string;
  readonly label = "OpenAI Realtime";
  readonly capabilities: ProviderCapabilities;
  readonly #options: Readonly<Required<OpenAiRealtimeOptions>>;

  constructor(options: OpenAiRealtimeOptions = {}) {
    const merged = mergeOptions(DEFAULTS, options);
    validateOptions(merged);
    if (merged.models.length === 0) merged.models = [merged.model];
    this.#options = Object.freeze(merged);
    this.id = merged.id;
    const capabilities: ProviderCapabilities = {
      modes: ["realtime"],
      transports: ["webrtc", "provider-websocket", "gateway-relay"],
      models: [...merged.models],
      voices: [...merged.voices],
      inputFormats: [...REALTIME_FORMATS],
      outputFormats: [...REALTIME_FORMATS],
      clientSessions: true,
      gatewayRelay: true,
      streaming: true,
      responseCancel: true,
      truncate: true,
      tools: true,
    };
    this.capabilities = Object.freeze(capabilities);
  }

  async health(): Promise<ProviderHealth> {
    if (!this.#options.apiKey) return { ok: false, detail: "no API key configured" };
    // Configured, not probed: a health check must stay cheap and must not spend quota.
    return { ok: true, detail: `configured for ${new URL(this.#options.baseUrl).host}` };
  }

  async createClientSession(request: ClientSessionRequest): Promise<ClientSessionGrant> {
    if (request.transport !== "webrtc" && request.transport !== "provider-websocket") {
      throw new TalkError(
        "capability_unsupported",
        `OpenAI client sessions use webrtc or provider-websocket, not ${request.transport}.`,
      );
    }
    if (!this.#options.apiKey)
      throw new TalkError("provider_unavailable", "OpenAI Realtime has no API key configured.");
    const model = request.model ?? this.#options.model;
    const voice = request.voice ?? this.#options.voice;
    if (!this.#options.models.includes(model)) {
      throw new TalkError("invalid_params", `Model "${model}" is not configured for OpenAI Realtime.`, {
        details: { models: this.#options.models },
      });
    }
    if (!this.#options.voices.includes(voice)) {
      throw new TalkError("invalid_params", `Voice "${voice}" is not available for OpenAI Realtime.`);
    }
    const minted = await mintClientSecret(
      {
        baseUrl: this.#options.baseUrl,
        apiKey: this.#options.apiKey,
        timeoutMs: this.#options.requestTimeoutMs,
      },
      {
        model,
        voice,
        instructions: request.instructions,
        tools: request.tools,
        ttlSeconds: this.#options.clientSecretTtlSeconds,
        signal: request.signal,
      },
    );
    return {
      clientSecret: minted.value,
      expiresAt: minted.expiresAt.toISOString(),
      endpoint: this.#clientEndpoint(request.transport, model),
      model,
      voice,
    };
  }

  /** Opens a Gateway-owned session; see connectOpenAiRealtime for how it fails. */
  async connect(
    options: RealtimeSessionOptions,
    onEvent: (event: RealtimeProviderEvent) => void,
  ): Promise<RealtimeVoiceSession> {
    const o = this.#options;
    if (!o.apiKey) throw new TalkError("provider_unavailable", "OpenAI Realtime has no API key configured.");
    const model = options.model ?? o.model;
    if (!o.models.includes(model)) {
      throw new TalkError("invalid_params", `Model "${model}" is not configured for OpenAI Realtime.`, {
        details: { models: o.models },
      });
    }
    return connectOpenAiRealtime(
      {
        apiKey: o.apiKey,
        url: o.realtimeUrl || this.#realtimeSocketUrl(),
        model,
        voice: o.voice,
        apiKeyHeader: o.apiKeyHeader,
        inputTranscriptionModel: o.inputTranscriptionModel,
        turnDetection: o.turnDetection,
        connectTimeoutMs: o.connectTimeoutMs,
        logger: o.logger,
      },
      { ...options, model },
      onEvent,
    );
  }

  async close(): Promise<void> {}

  #realtimeSocketUrl(): string {
    const ws = new URL(`${this.#options.baseUrl.replace(/\/+$/, "")}/realtime`);
    ws.protocol = ws.protocol === "http:" ? "ws:" : "wss:";
    return ws.toString();
  }

  /** Where the client connects with the secret: the WebRTC SDP endpoint, or the Realtime WebSocket. */
  #clientEndpoint(transport: "webrtc" | "provider-websocket", model: string): string {
    const base = this.#options.baseUrl.replace(/\/+$/, "");
    if (transport === "webrtc") return `${base}/realtime/calls`;
    const ws = new URL(`${base}/realtime`);
    ws.protocol = ws.protocol === "http:" ? "ws:" : "wss:";
    ws.searchParams.set("model", model);
    return ws.toString();
  }
}

export function createOpenAiRealtimeProvider(options: OpenAiRealtimeOptions = {}): OpenAiRealtimeProvider {
  return new OpenAiRealtimeProvider(options);
}

function validateOptions(o: Required<OpenAiRealtimeOptions>): void {
  const bad = (field: string, why: string): never => {
    throw new TalkError("config_invalid", `openai-realtime: ${field} ${why}`);
  };
  if (!o.id) bad("id", "must be a non-empty string");
  let url: URL | undefined;
  try {
    url = new URL(o.baseUrl);
  } catch {
    bad("baseUrl", "must be an absolute URL");
  }
  if (url && url.protocol !== "https:" && url.protocol !== "http:") bad("baseUrl", "must be http(s)");
  if (typeof o.apiKey !== "string") bad("apiKey", "must be a string");
  if (!o.model) bad("model", "must be a non-empty string");
  if (!Array.isArray(o.voices) || o.voices.length === 0) bad("voices", "must list at least one voice");
  if (!o.voices.includes(o.voice)) bad("voice", `must be one of voices (${o.voices.join(", ")})`);
  if (!Array.isArray(o.models)) bad("models", "must be an array");
  if (o.models.length > 0 && !o.models.includes(o.model)) bad("model", "must be one of models");
  if (
    !Number.isInteger(o.clientSecretTtlSeconds) ||
    o.clientSecretTtlSeconds < 10 ||
    o.clientSecretTtlSeconds > 7200
  ) {
    bad("clientSecretTtlSeconds", "must be an integer between 10 and 7200");
  }
  if (!Number.isInteger(o.requestTimeoutMs) || o.requestTimeoutMs < 1)
    bad("requestTimeoutMs", "must be a positive integer");
  if (!Number.isInteger(o.connectTimeoutMs) || o.connectTimeoutMs < 1)
    bad("connectTimeoutMs", "must be a positive integer");
  if (o.realtimeUrl !== "" && !/^wss?:\/\//.test(o.realtimeUrl))
    bad("realtimeUrl", "must be a ws:// or wss:// URL");
  if (o.apiKeyHeader !== "authorization" && o.apiKeyHeader !== "api-key")
    bad("apiKeyHeader", 'must be "authorization" or "api-key"');
}
