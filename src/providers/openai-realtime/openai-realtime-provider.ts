import { TalkError } from "../../core/index.js";
import { NOOP_LOGGER } from "../../core/index.js";
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
import {
  ALAW_8K,
  checkRealtimeChoice,
  checkRealtimeCommonOptions,
  realtimeCapabilities,
  realtimeHealth,
  requireClientTransport,
  socketUrl,
} from "../support/realtime-options.js";
import type { RealtimeVendorOptions } from "../support/realtime-options.js";

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
export interface OpenAiRealtimeOptions extends RealtimeVendorOptions {
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
  // The media leg decides about barge-in (greeting protection, interruptOnSpeech) and the relay cancels the
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
    this.capabilities = realtimeCapabilities({
      transports: ["webrtc", "provider-websocket", "gateway-relay"],
      models: merged.models,
      voices: merged.voices,
      inputFormats: REALTIME_FORMATS,
      outputFormats: REALTIME_FORMATS,
      cancelAndTruncate: true,
      // turn_detection: null, then input_audio_buffer.commit + response.create (documented).
      ownerTurns: true,
    });
  }

  async health(): Promise<ProviderHealth> {
    return realtimeHealth(this.#options);
  }

  async createClientSession(request: ClientSessionRequest): Promise<ClientSessionGrant> {
    const transport = requireClientTransport("OpenAI", request.transport, ["webrtc", "provider-websocket"]);
    const { model, voice } = checkRealtimeChoice(
      "OpenAI Realtime",
      this.#options,
      request.model,
      request.voice,
    );
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
      endpoint: this.#clientEndpoint(transport, model),
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
    const { model } = checkRealtimeChoice("OpenAI Realtime", o, options.model, undefined);
    return connectOpenAiRealtime(
      {
        apiKey: o.apiKey,
        url: o.realtimeUrl || socketUrl(o.baseUrl),
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

  /** Where the client connects with the secret: the WebRTC SDP endpoint, or the Realtime WebSocket. */
  #clientEndpoint(transport: "webrtc" | "provider-websocket", model: string): string {
    if (transport === "webrtc") return `${this.#options.baseUrl.replace(/\/+$/, "")}/realtime/calls`;
    return socketUrl(this.#options.baseUrl, model);
  }
}

export function createOpenAiRealtimeProvider(options: OpenAiRealtimeOptions = {}): OpenAiRealtimeProvider {
  return new OpenAiRealtimeProvider(options);
}

function validateOptions(o: Required<OpenAiRealtimeOptions>): void {
  checkRealtimeCommonOptions("openai-realtime", o);
  const bad = (field: string, why: string): never => {
    throw new TalkError("config_invalid", `openai-realtime: ${field} ${why}`);
  };
  if (o.realtimeUrl !== "" && !/^wss?:\/\//.test(o.realtimeUrl))
    bad("realtimeUrl", "must be a ws:// or wss:// URL");
  if (o.apiKeyHeader !== "authorization" && o.apiKeyHeader !== "api-key")
    bad("apiKeyHeader", 'must be "authorization" or "api-key"');
}
