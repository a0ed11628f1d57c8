/**
 * What realtime voice providers share besides their sockets: option checks
 * made at construction, the model / voice check of each request, and the
 * `{baseUrl}/realtime` socket URL of the APIs that use that path.
 */
import { TalkError } from "../../core/index.js";
import type {
  AudioFormat,
  ProviderCapabilities,
  ProviderHealth,
  TalkLogger,
  TalkTransport,
} from "../../core/index.js";

/** G.711 a-law at 8 kHz (phone audio some realtime APIs carry untouched). */
export const ALAW_8K: AudioFormat = Object.freeze({ encoding: "g711_alaw", sampleRate: 8000, channels: 1 });

/**
 * Options every realtime provider takes; each provider's defaults are in its
 * own docs section (docs/providers.md).
 */
export interface RealtimeVendorOptions {
  /** Registry id. */
  id?: string;
  /** API base URL. */
  baseUrl?: string;
  /** Server-side key; never echoed. Without it the provider is unhealthy and refuses to connect or mint. */
  apiKey?: string;
  /** Model when a request names none. */
  model?: string;
  /** Voice when a request names none. */
  voice?: string;
  /** Models advertised and accepted. Default [model]. */
  models?: string[];
  /** Voices advertised and accepted. */
  voices?: string[];
  /** Lifetime of minted client credentials, seconds, 10..7200. */
  clientSecretTtlSeconds?: number;
  /** Upper bound on each HTTP request, ms. */
  requestTimeoutMs?: number;
  /** WebSocket handshake plus the server's confirmation of the configuration, ms. */
  connectTimeoutMs?: number;
  logger?: TalkLogger;
}

/** The option fields every such provider has, once merged over its defaults. */
export interface RealtimeCommonOptions {
  id: string;
  baseUrl: string;
  apiKey: string;
  model: string;
  voice: string;
  models: string[];
  voices: string[];
  clientSecretTtlSeconds: number;
  requestTimeoutMs: number;
  connectTimeoutMs: number;
}

/** Validates the shared options; config_invalid naming `prefix` and the field. */
export function checkRealtimeCommonOptions(prefix: string, o: RealtimeCommonOptions): void {
  const bad = (field: string, why: string): never => {
    throw new TalkError("config_invalid", `${prefix}: ${field} ${why}`);
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
  const ttl = o.clientSecretTtlSeconds;
  if (!Number.isInteger(ttl) || ttl < 10 || ttl > 7200)
    bad("clientSecretTtlSeconds", "must be an integer between 10 and 7200");
  for (const key of ["requestTimeoutMs", "connectTimeoutMs"] as const) {
    if (!Number.isInteger(o[key]) || o[key] < 1) bad(key, "must be a positive integer");
  }
}

/**
 * The model and voice a request asks for (or the defaults), checked against
 * the configured lists: invalid_params naming the list; provider_unavailable
 * when no key is configured.
 */
export function checkRealtimeChoice(
  label: string,
  o: Pick<RealtimeCommonOptions, "apiKey" | "model" | "voice" | "models" | "voices">,
  model: string | undefined,
  voice: string | undefined,
): { model: string; voice: string } {
  if (!o.apiKey) throw new TalkError("provider_unavailable", `${label} has no API key configured.`);
  const m = model ?? o.model;
  const v = voice ?? o.voice;
  if (!o.models.includes(m))
    throw new TalkError("invalid_params", `Model "${m}" is not configured for ${label}.`, {
      details: { models: o.models },
    });
  if (!o.voices.includes(v))
    throw new TalkError("invalid_params", `Voice "${v}" is not available for ${label}.`, {
      details: { voices: o.voices },
    });
  return { model: m, voice: v };
}

/** `{baseUrl}/realtime` as a ws(s) URL, with `?model=` when given. */
export function socketUrl(baseUrl: string, model?: string): string {
  const ws = new URL(`${baseUrl.replace(/\/+$/, "")}/realtime`);
  ws.protocol = ws.protocol === "http:" ? "ws:" : "wss:";
  if (model !== undefined) ws.searchParams.set("model", model);
  return ws.toString();
}

/** What a realtime provider declares, from what differs between vendors. */
export function realtimeCapabilities(c: {
  transports: TalkTransport[];
  models: readonly string[];
  voices: readonly string[];
  inputFormats: readonly AudioFormat[];
  outputFormats: readonly AudioFormat[];
  /** The API cancels a response and truncates an item at the heard position. */
  cancelAndTruncate: boolean;
  /** The session runs with turn detection off, the owner committing audio and asking for answers. */
  ownerTurns: boolean;
}): ProviderCapabilities {
  return Object.freeze({
    modes: ["realtime"],
    transports: [...c.transports],
    models: [...c.models],
    voices: [...c.voices],
    inputFormats: [...c.inputFormats],
    outputFormats: [...c.outputFormats],
    clientSessions: true,
    gatewayRelay: true,
    streaming: true,
    responseCancel: c.cancelAndTruncate,
    truncate: c.cancelAndTruncate,
    ownerTurns: c.ownerTurns,
    tools: true,
    // Every such session takes user text (sendText: bridge) and speaks given text without answering
    // on its own (speakText with autoRespond false: brain).
    replyPaths: ["native", "bridge", "brain"],
  } satisfies ProviderCapabilities);
}

/** Configured, not probed: a health check must stay cheap and must not spend quota. */
export function realtimeHealth(o: { apiKey: string; baseUrl: string }): ProviderHealth {
  if (!o.apiKey) return { ok: false, detail: "no API key configured" };
  return { ok: true, detail: `configured for ${new URL(o.baseUrl).host}` };
}

/** capability_unsupported unless `transport` is one the vendor's client sessions use. */
export function requireClientTransport<T extends TalkTransport>(
  vendor: string,
  transport: TalkTransport,
  allowed: readonly T[],
): T {
  if (!(allowed as readonly TalkTransport[]).includes(transport))
    throw new TalkError(
      "capability_unsupported",
      `${vendor} client sessions use ${allowed.join(" or ")}, not ${transport}.`,
    );
  return transport as T;
}
