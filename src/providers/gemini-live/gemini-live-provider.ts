/**
 * Google's Gemini Live API behind the RealtimeProvider contract:
 * Gateway-owned sessions over the BidiGenerateContent WebSocket
 * (gateway-relay: phone calls, relayed browser audio), and client-owned
 * `provider-websocket` sessions through ephemeral tokens bound to the
 * Gateway's setup (talk.client.create). PCM16 16 kHz in, 24 kHz out; no
 * cancel and no truncate in the API (see gemini-live-session.ts for what
 * barge-in does instead).
 */
import { NOOP_LOGGER, TalkError } from "../../core/index.js";
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
import { mergeOptions } from "../support/options.js";
import {
  checkRealtimeChoice,
  checkRealtimeCommonOptions,
  realtimeCapabilities,
  realtimeHealth,
  requireClientTransport,
} from "../support/realtime-options.js";
import type { RealtimeVendorOptions } from "../support/realtime-options.js";
import { mintGeminiAuthToken } from "./gemini-auth-tokens.js";
import { connectGeminiLive } from "./gemini-live-session.js";
import {
  buildGeminiSetup,
  GEMINI_INPUT_FORMAT,
  GEMINI_OUTPUT_FORMAT,
  type GeminiActivityHandling,
} from "./gemini-live-setup.js";

/** Prebuilt voices the Live API documents for speech output. */
export const GEMINI_LIVE_VOICES = Object.freeze([
  "Puck",
  "Charon",
  "Kore",
  "Fenrir",
  "Aoede",
  "Leda",
  "Orus",
  "Zephyr",
]);

/** Options of the Gemini Live provider (`talk.realtime.providers.gemini`). */
export interface GeminiLiveOptions extends RealtimeVendorOptions {
  /** Whether caller speech stops the model (server-side). Default "START_OF_ACTIVITY_INTERRUPTS". */
  activityHandling?: GeminiActivityHandling;
  /** Transcribe caller and model speech. Default true. */
  transcription?: boolean;
  /** How long a minted token may start a session, seconds. Default 60. */
  newSessionSeconds?: number;
}

const DEFAULTS: Readonly<Required<GeminiLiveOptions>> = Object.freeze({
  id: "gemini",
  baseUrl: "https://generativelanguage.googleapis.com",
  apiKey: "",
  model: "gemini-live-2.5-flash-preview",
  voice: "Puck",
  models: [],
  voices: [...GEMINI_LIVE_VOICES],
  activityHandling: "START_OF_ACTIVITY_INTERRUPTS" as const,
  transcription: true,
  clientSecretTtlSeconds: 1800,
  newSessionSeconds: 60,
  requestTimeoutMs: 10_000,
  connectTimeoutMs: 10_000,
  logger: NOOP_LOGGER,
});

const LABEL = "Gemini Live";
const SERVICE = "google.ai.generativelanguage";

export class GeminiLiveProvider implements RealtimeProvider {
  readonly kind = "realtime" as const;
  readonly id: string;
  readonly label = LABEL;
  readonly capabilities: ProviderCapabilities;
  readonly #options: Readonly<Required<GeminiLiveOptions>>;

  constructor(options: GeminiLiveOptions = {}) {
    const merged = mergeOptions(DEFAULTS, options);
    checkRealtimeCommonOptions("gemini-live", merged);
    if (
      merged.activityHandling !== "START_OF_ACTIVITY_INTERRUPTS" &&
      merged.activityHandling !== "NO_INTERRUPTION"
    )
      throw new TalkError(
        "config_invalid",
        "gemini-live: activityHandling must be START_OF_ACTIVITY_INTERRUPTS or NO_INTERRUPTION",
      );
    if (
      !Number.isInteger(merged.newSessionSeconds) ||
      merged.newSessionSeconds < 10 ||
      merged.newSessionSeconds > merged.clientSecretTtlSeconds
    )
      throw new TalkError(
        "config_invalid",
        "gemini-live: newSessionSeconds must be an integer from 10 to clientSecretTtlSeconds",
      );
    if (merged.models.length === 0) merged.models = [merged.model];
    this.#options = Object.freeze(merged);
    this.id = merged.id;
    // No cancel and no truncate in the Live API: barge-in is the server's activity detection (see docs).
    this.capabilities = realtimeCapabilities({
      transports: ["provider-websocket", "gateway-relay"],
      models: merged.models,
      voices: merged.voices,
      inputFormats: [GEMINI_INPUT_FORMAT],
      outputFormats: [GEMINI_OUTPUT_FORMAT],
      cancelAndTruncate: false,
      // Manual activity detection needs activityStart / activityEnd around each turn: not sent yet.
      ownerTurns: false,
    });
  }

  async health(): Promise<ProviderHealth> {
    return realtimeHealth(this.#options);
  }

  async createClientSession(request: ClientSessionRequest): Promise<ClientSessionGrant> {
    const o = this.#options;
    requireClientTransport("Gemini Live", request.transport, ["provider-websocket"]);
    const { model, voice } = checkRealtimeChoice(LABEL, o, request.model, request.voice);
    const now = Date.now();
    const minted = await mintGeminiAuthToken({
      baseUrl: o.baseUrl,
      apiKey: o.apiKey,
      timeoutMs: o.requestTimeoutMs,
      uses: 1,
      expireTime: new Date(now + o.clientSecretTtlSeconds * 1000),
      newSessionExpireTime: new Date(now + o.newSessionSeconds * 1000),
      setup: buildGeminiSetup(
        { instructions: request.instructions, tools: request.tools, voice },
        { model, voice, activityHandling: o.activityHandling, transcription: o.transcription },
      ),
      signal: request.signal,
    });
    return {
      clientSecret: minted.token,
      expiresAt: minted.expireTime.toISOString(),
      endpoint: this.#socketUrl("v1alpha", "BidiGenerateContentConstrained"),
      model,
      voice,
      credentialIn: { query: "access_token" },
    };
  }

  async connect(
    options: RealtimeSessionOptions,
    onEvent: (event: RealtimeProviderEvent) => void,
  ): Promise<RealtimeVoiceSession> {
    const o = this.#options;
    const { model, voice } = checkRealtimeChoice(LABEL, o, options.model, options.voice);
    return connectGeminiLive(
      {
        apiKey: o.apiKey,
        url: this.#socketUrl("v1beta", "BidiGenerateContent"),
        model,
        voice,
        activityHandling: o.activityHandling,
        transcription: o.transcription,
        connectTimeoutMs: o.connectTimeoutMs,
        logger: o.logger,
      },
      { ...options, model, voice },
      onEvent,
    );
  }

  async close(): Promise<void> {}

  #socketUrl(version: string, method: string): string {
    const url = new URL(
      `${this.#options.baseUrl.replace(/\/+$/, "")}/ws/${SERVICE}.${version}.GenerativeService.${method}`,
    );
    url.protocol = url.protocol === "http:" ? "ws:" : "wss:";
    return url.toString();
  }
}

export function createGeminiLiveProvider(options: GeminiLiveOptions = {}): GeminiLiveProvider {
  return new GeminiLiveProvider(options);
}
