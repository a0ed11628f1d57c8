import { pcm16FromBytes } from "../../codecs/index.js";
import { pcmChunk, TalkError } from "../../core/index.js";
import type {
  AudioChunk,
  ProviderCapabilities,
  ProviderHealth,
  TtsProvider,
  TtsRequest,
} from "../../core/index.js";
import type { AudioFormat } from "../../core/index.js";
import {
  cancelledError,
  definedOnly,
  endpointHealth,
  OPENAI_API_BASE_URL,
  postRequest,
  validateEndpointOptions,
  type AudioEndpoint,
} from "./openai-audio-http.js";

/**
 * Text to speech over an OpenAI-compatible `POST {baseUrl}/audio/speech`
 * (OpenAI itself, and local servers such as openedai-speech, speaches or
 * LocalAI) with `response_format: "pcm"`: the body is raw PCM16
 * little-endian mono, streamed chunked, and each chunk is yielded as it
 * arrives, so the first audio plays before the whole answer is synthesized.
 */
export interface OpenAiTtsOptions {
  /** Endpoint root including the version. Default "https://api.openai.com/v1". */
  baseUrl?: string;
  /** Bearer token; omitted for local servers that need none. Never logged or put in errors. */
  apiKey?: string;
  /** Model sent with each request. Default "gpt-4o-mini-tts". */
  model?: string;
  /** Voice when a request names none. Default "alloy". */
  voice?: string;
  /**
   * Voices requests may name; another is refused (`invalid_params`) before any request.
   * Default none: any voice is passed to the server, which decides (local servers have their own names).
   */
  voices?: string[];
  /** Sent as `instructions` (tone, accent; gpt-4o-mini-tts, not tts-1). Default none. */
  instructions?: string;
  /** Rate of the PCM the server sends: raw PCM has no header. OpenAI: 24 000. Default 24 000. */
  sampleRate?: number;
  /** Longest exchange, request to last byte, ms. Default 30 000. */
  timeoutMs?: number;
  /** Longest text accepted, characters (OpenAI: 4096). Default 4096. */
  maxTextLength?: number;
  /** Provider id in the registry and catalog. Default "openai-compatible". */
  id?: string;
  /** Human-readable name. Default "OpenAI-compatible text to speech". */
  label?: string;
}

type ResolvedOptions = Required<Omit<OpenAiTtsOptions, "apiKey" | "voices" | "instructions">> &
  Pick<OpenAiTtsOptions, "apiKey" | "voices" | "instructions">;

export const OPENAI_TTS_DEFAULTS = Object.freeze({
  baseUrl: OPENAI_API_BASE_URL,
  model: "gpt-4o-mini-tts",
  voice: "alloy",
  sampleRate: 24_000,
  timeoutMs: 30_000,
  maxTextLength: 4096,
  id: "openai-compatible",
  label: "OpenAI-compatible text to speech",
} as const);

/** OpenAI's accepted `speed` range. */
const MIN_SPEED = 0.25;
const MAX_SPEED = 4;
const SAMPLE_RATES = new Set([8000, 16_000, 22_050, 24_000, 44_100, 48_000]);

export class OpenAiTtsProvider implements TtsProvider {
  readonly kind = "tts" as const;
  readonly id: string;
  readonly label: string;
  readonly capabilities: ProviderCapabilities;
  readonly #options: Readonly<ResolvedOptions>;
  readonly #endpoint: AudioEndpoint;
  readonly #format: AudioFormat;

  constructor(options: OpenAiTtsOptions = {}) {
    const merged = { ...OPENAI_TTS_DEFAULTS, ...definedOnly(options) } as ResolvedOptions;
    validateOptions(merged);
    this.#options = Object.freeze({ ...merged, ...(merged.voices ? { voices: [...merged.voices] } : {}) });
    this.#endpoint = Object.freeze({
      baseUrl: merged.baseUrl.replace(/\/+$/, ""),
      apiKey: merged.apiKey || undefined,
      timeoutMs: merged.timeoutMs,
      what: "The text-to-speech endpoint",
    });
    this.#format = Object.freeze({ encoding: "pcm16", sampleRate: merged.sampleRate, channels: 1 });
    this.id = merged.id;
    this.label = merged.label;
    this.capabilities = Object.freeze({
      streaming: true,
      models: [merged.model],
      voices: merged.voices ? [...merged.voices] : [merged.voice],
      outputFormats: [this.#format],
    });
  }

  async health(): Promise<ProviderHealth> {
    return endpointHealth(this.#endpoint, this.#options.model);
  }

  async close(): Promise<void> {
    // Nothing long-lived: every synthesis owns its HTTP request.
  }

  async *synthesize(request: TtsRequest): AsyncGenerator<AudioChunk> {
    const { signal } = request;
    const body = this.#body(request);
    if (signal.aborted) throw cancelledError(signal, "Speech synthesis");
    const exchange = await postRequest(
      this.#endpoint,
      "/audio/speech",
      JSON.stringify(body),
      { "content-type": "application/json", accept: "audio/pcm, application/octet-stream" },
      signal,
    );
    let finished = false;
    try {
      const { response } = exchange;
      const contentType = response.headers.get("content-type") ?? "";
      if (contentType.includes("application/json") || contentType.includes("text/event-stream")) {
        throw new TalkError(
          "provider_error",
          `The text-to-speech endpoint answered ${contentType.split(";")[0]} instead of PCM audio.`,
        );
      }
      if (!response.body)
        throw new TalkError("provider_error", "The text-to-speech endpoint answered without a body.");
      /** A sample split across two network chunks: its first byte waits for the next chunk. */
      let odd: number | undefined;
      for await (const bytes of response.body as AsyncIterable<Uint8Array>) {
        if (signal.aborted) break;
        if (bytes.byteLength === 0) continue;
        const total = bytes.byteLength + (odd === undefined ? 0 : 1);
        const even = total - (total % 2);
        const carried = odd;
        odd = total % 2 === 1 ? bytes[bytes.byteLength - 1] : undefined;
        if (even === 0) continue;
        // A fresh, aligned buffer, viewed as samples without a copy.
        const data = new Uint8Array(even);
        if (carried !== undefined) {
          data[0] = carried;
          data.set(bytes.subarray(0, even - 1), 1);
        } else {
          data.set(bytes.subarray(0, even));
        }
        yield pcmChunk(pcm16FromBytes(data), this.#format);
        if (signal.aborted) break;
      }
      if (signal.aborted) throw cancelledError(signal, "Speech synthesis");
      // A last odd byte is half a sample: nothing to play.
      finished = true;
    } catch (err) {
      throw exchange.failure(err);
    } finally {
      exchange.done();
      // Aborted, failed, or the consumer stopped early: close the HTTP stream now.
      if (!finished) exchange.stop();
    }
  }

  #body(request: TtsRequest): Record<string, unknown> {
    const text = request.text;
    if (typeof text !== "string" || text.trim() === "") {
      throw new TalkError("invalid_params", "text must be a non-empty string.");
    }
    if (text.length > this.#options.maxTextLength) {
      throw new TalkError(
        "payload_too_large",
        `text is ${text.length} characters; the limit is ${this.#options.maxTextLength}.`,
        { details: { maxTextLength: this.#options.maxTextLength } },
      );
    }
    const voice = request.voice ?? this.#options.voice;
    if (this.#options.voices && !this.#options.voices.includes(voice)) {
      throw new TalkError("invalid_params", `Unknown text-to-speech voice "${voice}".`, {
        details: { voice },
      });
    }
    const body: Record<string, unknown> = {
      model: this.#options.model,
      input: text,
      voice,
      response_format: "pcm",
    };
    if (request.speed !== undefined) {
      if (!Number.isFinite(request.speed) || request.speed < MIN_SPEED || request.speed > MAX_SPEED) {
        throw new TalkError(
          "invalid_params",
          `speed must be between ${MIN_SPEED} and ${MAX_SPEED} (1.0 = normal).`,
        );
      }
      if (request.speed !== 1) body.speed = request.speed;
    }
    if (this.#options.instructions) body.instructions = this.#options.instructions;
    return body;
  }
}

export function createOpenAiTts(options: OpenAiTtsOptions = {}): OpenAiTtsProvider {
  return new OpenAiTtsProvider(options);
}

function validateOptions(o: ResolvedOptions): void {
  const bad = (field: string, why: string): never => {
    throw new TalkError("config_invalid", `openai-compatible tts: ${field} ${why}`);
  };
  validateEndpointOptions("openai-compatible tts", o);
  if (typeof o.model !== "string" || o.model.trim() === "") bad("model", "is required");
  if (typeof o.voice !== "string" || o.voice.trim() === "") bad("voice", "must be a non-empty string");
  if (o.voices !== undefined) {
    if (
      !Array.isArray(o.voices) ||
      o.voices.length === 0 ||
      o.voices.some((v) => typeof v !== "string" || !v)
    ) {
      bad("voices", "must be a non-empty list of voice names");
    }
    if (!o.voices.includes(o.voice)) bad("voice", `"${o.voice}" is not in voices`);
  }
  if (o.instructions !== undefined && typeof o.instructions !== "string")
    bad("instructions", "must be a string");
  if (!SAMPLE_RATES.has(o.sampleRate)) bad("sampleRate", `must be one of ${[...SAMPLE_RATES].join(", ")}`);
  if (!Number.isInteger(o.maxTextLength) || o.maxTextLength < 1)
    bad("maxTextLength", "must be a positive integer");
  if (!o.label) bad("label", "must be a non-empty string");
}
