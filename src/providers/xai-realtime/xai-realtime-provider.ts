/**
 * xAI's Voice Agent API (Grok) behind the RealtimeProvider contract. The
 * WebSocket protocol is OpenAI Realtime's, so the connection, the event
 * mapping and the client-secret request are the OpenAI provider's own code,
 * parameterized; what differs is here and in xai-realtime-session-config.ts:
 *
 * - endpoint `wss://api.x.ai/v1/realtime?model=…`, `Authorization: Bearer`;
 * - the session object (flat voice / turn_detection, PCM at 8-48 kHz, the
 *   caller transcribed without a transcription model, server-side tools);
 * - voices Ara, Rex, Sal, Eve, Leo;
 * - ephemeral tokens: `POST /v1/realtime/client_secrets` takes only
 *   `{expires_after: {seconds}}` (no session, no anchor), so a token is not
 *   bound to a configuration: the grant carries the Gateway-built
 *   `session.update` as `clientConfig`, for the client to send first, and the
 *   client presents the token as the `xai-client-secret.<token>` subprotocol;
 * - no out-of-band responses documented: progressive speech is spoken as
 *   ordinary responses.
 */
import { TalkError } from "../../core/index.js";
import { NOOP_LOGGER } from "../../core/index.js";
import type {
  AudioFormat,
  ClientSessionGrant,
  ClientSessionRequest,
  ProviderCapabilities,
  ProviderHealth,
  RealtimeProvider,
  RealtimeProviderEvent,
  RealtimeSessionOptions,
  RealtimeVoiceSession,
} from "../../core/index.js";
import { PCM16_24K, ULAW_8K } from "../../core/index.js";
import { mergeOptions } from "../support/options.js";
import { mintClientSecret } from "../openai-realtime/openai-client-secrets.js";
import { connectOpenAiRealtime } from "../openai-realtime/openai-realtime-session.js";
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
import {
  buildXaiSessionUpdate,
  type XaiServerTool,
  type XaiServerVad,
} from "./xai-realtime-session-config.js";

/** Voices the Voice Agent API documents (Ara is its default). */
export const XAI_REALTIME_VOICES = Object.freeze(["Ara", "Rex", "Sal", "Eve", "Leo"]);

const pcm = (sampleRate: number): AudioFormat =>
  Object.freeze({ encoding: "pcm16", sampleRate, channels: 1 });
/** 24 kHz first (the API's default and what other PCM is converted to), then rates and G.711 passed through. */
const XAI_FORMATS: readonly AudioFormat[] = Object.freeze([
  PCM16_24K,
  pcm(16000),
  pcm(48000),
  pcm(8000),
  ULAW_8K,
  ALAW_8K,
]);

/** Options of the xAI realtime provider (`talk.realtime.providers.xai`). */
export interface XaiRealtimeOptions extends RealtimeVendorOptions {
  /** Server VAD of Gateway-owned sessions; null: the Gateway commits turns. Default { type: "server_vad" }. */
  turnDetection?: XaiServerVad | null;
  /** Server-side tools offered beside the Gateway's function tools. Default none. */
  serverTools?: XaiServerTool[];
}

const DEFAULTS: Readonly<Required<XaiRealtimeOptions>> = Object.freeze({
  id: "xai",
  baseUrl: "https://api.x.ai/v1",
  apiKey: "",
  model: "grok-voice-latest",
  voice: "Ara",
  models: [],
  voices: [...XAI_REALTIME_VOICES],
  turnDetection: Object.freeze({ type: "server_vad" as const }),
  serverTools: [],
  clientSecretTtlSeconds: 300,
  requestTimeoutMs: 10_000,
  connectTimeoutMs: 10_000,
  logger: NOOP_LOGGER,
});

const LABEL = "xAI Voice Agent";

export class XaiRealtimeProvider implements RealtimeProvider {
  readonly kind = "realtime" as const;
  readonly id: string;
  readonly label = LABEL;
  readonly capabilities: ProviderCapabilities;
  readonly #options: Readonly<Required<XaiRealtimeOptions>>;

  constructor(options: XaiRealtimeOptions = {}) {
    const merged = mergeOptions(DEFAULTS, options);
    merged.voice = canonicalVoice(merged.voices, merged.voice) ?? merged.voice;
    checkRealtimeCommonOptions("xai-realtime", merged);
    for (const tool of merged.serverTools) {
      if (tool.type !== "web_search" && tool.type !== "x_search")
        throw new TalkError(
          "config_invalid",
          `xai-realtime: serverTools: unknown tool type "${String((tool as { type: unknown }).type)}"`,
        );
    }
    if (merged.models.length === 0) merged.models = [merged.model];
    this.#options = Object.freeze(merged);
    this.id = merged.id;
    this.capabilities = realtimeCapabilities({
      transports: ["provider-websocket", "gateway-relay"],
      models: merged.models,
      voices: merged.voices,
      inputFormats: XAI_FORMATS,
      outputFormats: XAI_FORMATS,
      cancelAndTruncate: true,
      // turn_detection: null, then input_audio_buffer.commit + response.create, as OpenAI's.
      ownerTurns: true,
    });
  }

  async health(): Promise<ProviderHealth> {
    return realtimeHealth(this.#options);
  }

  async createClientSession(request: ClientSessionRequest): Promise<ClientSessionGrant> {
    const o = this.#options;
    requireClientTransport("xAI", request.transport, ["provider-websocket"]);
    const { model, voice } = this.#choose(request.model, request.voice);
    const minted = await mintClientSecret(
      { baseUrl: o.baseUrl, apiKey: o.apiKey, timeoutMs: o.requestTimeoutMs, label: "xAI" },
      {
        model,
        voice,
        instructions: request.instructions,
        tools: request.tools,
        ttlSeconds: o.clientSecretTtlSeconds,
        signal: request.signal,
      },
      // The documented body: "Does not support session or expires_after.anchor fields".
      { expires_after: { seconds: o.clientSecretTtlSeconds } },
    );
    return {
      clientSecret: minted.value,
      expiresAt: minted.expiresAt.toISOString(),
      endpoint: socketUrl(o.baseUrl, model),
      model,
      voice,
      credentialIn: { subprotocolPrefix: "xai-client-secret." },
      clientConfig: this.#sessionUpdate({
        instructions: request.instructions,
        tools: request.tools,
        voice,
        inputFormat: PCM16_24K,
        outputFormat: PCM16_24K,
        signal: request.signal,
      }),
    };
  }

  async connect(
    options: RealtimeSessionOptions,
    onEvent: (event: RealtimeProviderEvent) => void,
  ): Promise<RealtimeVoiceSession> {
    const o = this.#options;
    const { model, voice } = this.#choose(options.model, options.voice);
    return connectOpenAiRealtime(
      {
        apiKey: o.apiKey,
        url: socketUrl(o.baseUrl, model),
        model,
        voice,
        connectTimeoutMs: o.connectTimeoutMs,
        label: LABEL,
        outOfBandResponses: false,
        sessionShape: "flat",
        logger: o.logger,
      },
      { ...options, model, voice },
      onEvent,
      (session) => this.#sessionUpdate(session),
    );
  }

  async close(): Promise<void> {}

  #sessionUpdate(options: RealtimeSessionOptions): Record<string, unknown> {
    return buildXaiSessionUpdate(options, {
      voice: this.#options.voice,
      turnDetection: this.#options.turnDetection,
      serverTools: this.#options.serverTools,
    });
  }

  /** The model and voice of a request, checked against the configured ones; provider_unavailable without a key. */
  #choose(model: string | undefined, voice: string | undefined): { model: string; voice: string } {
    const v = voice === undefined ? undefined : (canonicalVoice(this.#options.voices, voice) ?? voice);
    return checkRealtimeChoice(LABEL, this.#options, model, v);
  }
}

/**
 * xAI's docs spell the voices both ways ("Eve" in the session parameters,
 * "eve" in newer examples and the agent builder), so a voice is matched
 * without case and sent as configured.
 */
function canonicalVoice(voices: readonly string[], voice: string): string | undefined {
  const lower = voice.toLowerCase();
  return voices.find((v) => v.toLowerCase() === lower);
}

export function createXaiRealtimeProvider(options: XaiRealtimeOptions = {}): XaiRealtimeProvider {
  return new XaiRealtimeProvider(options);
}
