import { writeWav } from "../../codecs/index.js";
import { TalkError } from "../../core/index.js";
import type {
  ProviderCapabilities,
  ProviderHealth,
  SttProvider,
  SttResult,
  SttStream,
  SttStreamOptions,
} from "../../core/index.js";
import { PCM16_16K, type AudioFormat } from "../../core/index.js";
import {
  cancelledError,
  definedOnly,
  endpointHealth,
  isRecord,
  OPENAI_API_BASE_URL,
  postRequest,
  redact,
  validateEndpointOptions,
  type AudioEndpoint,
} from "./openai-audio-http.js";
import { SseParser } from "./sse-parser.js";

/**
 * Speech to text over an OpenAI-compatible `POST {baseUrl}/audio/transcriptions`
 * (OpenAI itself, and local servers such as faster-whisper-server / speaches
 * or LocalAI). The endpoint takes a whole recording, so a stream buffers the
 * turn's audio and uploads it as one WAV (multipart/form-data) at finish().
 * With `stream` on, the server answers server-sent events
 * (`transcript.text.delta` ... `transcript.text.done`) and each delta is
 * reported as a partial while the transcription runs; otherwise (or when the
 * server ignores `stream`, as OpenAI does for whisper-1) one JSON `{text}`.
 */
export interface OpenAiSttOptions {
  /** Endpoint root including the version. Default "https://api.openai.com/v1". */
  baseUrl?: string;
  /** Bearer token; omitted for local servers that need none. Never logged or put in errors. */
  apiKey?: string;
  /** Model sent with each request. Default "gpt-4o-mini-transcribe". */
  model?: string;
  /** Language (ISO-639-1, e.g. "en") when a stream names none. A tag like "en-US" is sent as "en". Default none (detected). */
  language?: string;
  /** Sent as `prompt` (vocabulary, style). Default none. */
  prompt?: string;
  /** `json`, `text` or `verbose_json`. Default "json". */
  responseFormat?: "json" | "text" | "verbose_json";
  /**
   * Ask for server-sent events (`stream=true`). "auto" (default): on for
   * models named like gpt-4o-transcribe / gpt-4o-mini-transcribe, off for the
   * rest (whisper-1 and most local servers ignore or refuse it).
   */
  stream?: boolean | "auto";
  /** Longest exchange, upload to last event, ms. Default 30 000. */
  timeoutMs?: number;
  /** Longest turn buffered, seconds (OpenAI accepts files up to 25 MB). Default 300. */
  maxAudioSeconds?: number;
  /** Shorter audio is not sent and transcribes as "" (servers refuse very short files). Default 100 ms. */
  minAudioMs?: number;
  /** Provider id in the registry and catalog. Default "openai-compatible". */
  id?: string;
  /** Human-readable name. Default "OpenAI-compatible speech to text". */
  label?: string;
}

type ResolvedOptions = Required<Omit<OpenAiSttOptions, "apiKey" | "language" | "prompt">> &
  Pick<OpenAiSttOptions, "apiKey" | "language" | "prompt">;

export const OPENAI_STT_DEFAULTS = Object.freeze({
  baseUrl: OPENAI_API_BASE_URL,
  model: "gpt-4o-mini-transcribe",
  responseFormat: "json",
  stream: "auto",
  timeoutMs: 30_000,
  maxAudioSeconds: 300,
  minAudioMs: 100,
  id: "openai-compatible",
  label: "OpenAI-compatible speech to text",
} as const);

const RESPONSE_FORMATS = new Set(["json", "text", "verbose_json"]);

/** OpenAI's models that stream transcripts; whisper-1 does not. */
export function modelStreamsTranscripts(model: string): boolean {
  return /(^|\/)gpt-[\w.-]*transcribe/i.test(model);
}

export class OpenAiSttProvider implements SttProvider {
  readonly kind = "stt" as const;
  readonly id: string;
  readonly label: string;
  readonly capabilities: ProviderCapabilities;
  readonly #options: Readonly<ResolvedOptions>;
  readonly #endpoint: AudioEndpoint;
  readonly #stream: boolean;

  constructor(options: OpenAiSttOptions = {}) {
    const merged = { ...OPENAI_STT_DEFAULTS, ...definedOnly(options) } as ResolvedOptions;
    validateOptions(merged);
    this.#options = Object.freeze(merged);
    this.#endpoint = Object.freeze({
      baseUrl: merged.baseUrl.replace(/\/+$/, ""),
      apiKey: merged.apiKey || undefined,
      timeoutMs: merged.timeoutMs,
      what: "The speech-to-text endpoint",
    });
    this.#stream =
      merged.stream === "auto"
        ? modelStreamsTranscripts(merged.model) && merged.responseFormat !== "verbose_json"
        : merged.stream;
    this.id = merged.id;
    this.label = merged.label;
    this.capabilities = Object.freeze({
      // Partials come from the server's transcript deltas, i.e. after the turn's audio was uploaded.
      streaming: this.#stream,
      models: [merged.model],
      // Any PCM16 rate is accepted (it goes into the WAV header); 16 kHz is what Whisper-class models use.
      inputFormats: [PCM16_16K],
    });
  }

  /** Whether requests ask for server-sent events. */
  get streamsTranscripts(): boolean {
    return this.#stream;
  }

  async health(): Promise<ProviderHealth> {
    return endpointHealth(this.#endpoint, this.#options.model);
  }

  async close(): Promise<void> {
    // Nothing long-lived: every stream owns its one HTTP request.
  }

  startStream(options: SttStreamOptions): SttStream {
    const { format } = options;
    if (
      format.encoding !== "pcm16" ||
      !Number.isInteger(format.sampleRate) ||
      format.sampleRate < 8000 ||
      format.sampleRate > 48_000 ||
      (format.channels !== 1 && format.channels !== 2)
    ) {
      throw new TalkError(
        "invalid_audio",
        "The speech-to-text stream needs PCM16, 8-48 kHz, mono or stereo.",
        {
          details: { format: { ...format } },
        },
      );
    }
    return new OpenAiSttStream({
      endpoint: this.#endpoint,
      options: this.#options,
      stream: this.#stream,
      format,
      language: options.language ?? this.#options.language,
      signal: options.signal,
      onPartial: options.onPartial,
    });
  }
}

export function createOpenAiStt(options: OpenAiSttOptions = {}): OpenAiSttProvider {
  return new OpenAiSttProvider(options);
}

interface StreamSetup {
  endpoint: AudioEndpoint;
  options: Readonly<ResolvedOptions>;
  stream: boolean;
  format: AudioFormat;
  language: string | undefined;
  signal: AbortSignal;
  onPartial: ((text: string) => void) | undefined;
}

class OpenAiSttStream implements SttStream {
  readonly #setup: StreamSetup;
  readonly #maxSamples: number;
  #chunks: Int16Array[] = [];
  #samples = 0;
  #tooLong = false;
  #state: "open" | "finishing" | "ended" = "open";
  #finish: Promise<SttResult> | undefined;

  constructor(setup: StreamSetup) {
    this.#setup = setup;
    this.#maxSamples = Math.floor(
      setup.options.maxAudioSeconds * setup.format.sampleRate * setup.format.channels,
    );
    // Aborting before finish() drops the audio; nothing was sent yet.
    setup.signal.addEventListener("abort", () => this.#drop(), { once: true });
    if (setup.signal.aborted) this.#drop();
  }

  write(pcm: Int16Array): void {
    if (this.#state !== "open")
      throw new TalkError("invalid_state", "The STT stream is finished or aborted.");
    if (pcm.length === 0) return;
    if (this.#samples + pcm.length > this.#maxSamples) {
      // finish() reports it; the caller keeps writing a turn it cannot stop from here.
      this.#tooLong = true;
      return;
    }
    // Copied: the caller may reuse its buffer.
    this.#chunks.push(pcm.slice());
    this.#samples += pcm.length;
  }

  finish(): Promise<SttResult> {
    this.#finish ??= this.#finishOnce();
    return this.#finish;
  }

  #drop(): void {
    this.#state = "ended";
    this.#chunks = [];
  }

  async #finishOnce(): Promise<SttResult> {
    const { signal, endpoint, options } = this.#setup;
    if (signal.aborted) throw cancelledError(signal, "Speech recognition");
    this.#state = "finishing";
    if (this.#tooLong) {
      this.#drop();
      throw new TalkError(
        "payload_too_large",
        `The turn is longer than ${options.maxAudioSeconds} s, the speech-to-text limit (maxAudioSeconds).`,
        { details: { maxAudioSeconds: options.maxAudioSeconds } },
      );
    }
    const { sampleRate, channels } = this.#setup.format;
    const durationMs = (this.#samples / channels / sampleRate) * 1000;
    if (durationMs < options.minAudioMs) {
      this.#drop();
      return { text: "" };
    }
    const pcm = new Int16Array(this.#samples);
    let at = 0;
    for (const chunk of this.#chunks) {
      pcm.set(chunk, at);
      at += chunk.length;
    }
    this.#chunks = [];
    const wav = writeWav(pcm, { sampleRate, channels });

    const form = new FormData();
    form.append("file", new Blob([wav], { type: "audio/wav" }), "speech.wav");
    form.append("model", options.model);
    form.append("response_format", options.responseFormat);
    const language = isoLanguage(this.#setup.language);
    if (language) form.append("language", language);
    if (options.prompt) form.append("prompt", options.prompt);
    if (this.#setup.stream) form.append("stream", "true");

    const headers = {
      accept: this.#setup.stream ? "text/event-stream, application/json" : "application/json",
    };
    const request = await postRequest(endpoint, "/audio/transcriptions", form, headers, signal);
    let completed = false;
    try {
      const contentType = request.response.headers.get("content-type") ?? "";
      if (contentType.includes("text/event-stream")) {
        const text = await this.#readEvents(request.response);
        completed = true;
        return { text };
      }
      const body = await request.response.text();
      if (signal.aborted) throw cancelledError(signal, "Speech recognition");
      completed = true;
      return { text: this.#fromBody(body, contentType) };
    } catch (err) {
      throw request.failure(err);
    } finally {
      request.done();
      if (!completed) request.stop();
      this.#state = "ended";
    }
  }

  /** `transcript.text.delta` events (reported as partials), ended by `transcript.text.done`. */
  async #readEvents(response: Response): Promise<string> {
    const { signal } = this.#setup;
    if (!response.body)
      throw new TalkError("provider_error", "The speech-to-text endpoint answered without a body.");
    const parser = new SseParser();
    let running = "";
    let final: string | undefined;
    const take = (data: string): void => {
      if (data.trim() === "[DONE]") return;
      let event: unknown;
      try {
        event = JSON.parse(data);
      } catch (err) {
        throw new TalkError("provider_error", "The speech-to-text endpoint sent a malformed event.", {
          cause: err,
          details: { sample: redact(data.slice(0, 120), this.#setup.endpoint.apiKey) },
        });
      }
      if (!isRecord(event)) return;
      if (event.error !== undefined) {
        const e = event.error;
        const message = isRecord(e) && typeof e.message === "string" ? e.message : String(e);
        throw new TalkError(
          "provider_error",
          `The speech-to-text endpoint reported an error: ${redact(message.slice(0, 300), this.#setup.endpoint.apiKey)}`,
        );
      }
      if (event.type === "transcript.text.delta" && typeof event.delta === "string") {
        if (event.delta.length === 0) return;
        running += event.delta;
        this.#partial(running);
      } else if (event.type === "transcript.text.done" && typeof event.text === "string") {
        final = event.text;
      }
      // Other types (transcript.text.segment of diarizing models, future events) carry nothing we use.
    };
    for await (const bytes of response.body as AsyncIterable<Uint8Array>) {
      for (const event of parser.push(bytes)) take(event.data);
      if (signal.aborted) throw cancelledError(signal, "Speech recognition");
      if (final !== undefined) break;
    }
    if (final === undefined) for (const event of parser.end()) take(event.data);
    if (signal.aborted) throw cancelledError(signal, "Speech recognition");
    if (final === undefined) {
      throw new TalkError("provider_error", "The transcript stream ended before transcript.text.done.", {
        details: { receivedChars: running.length },
      });
    }
    return final.trim();
  }

  #fromBody(body: string, contentType: string): string {
    if (this.#setup.options.responseFormat === "text" && !contentType.includes("application/json")) {
      return body.trim();
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch (err) {
      throw new TalkError("provider_error", "The speech-to-text endpoint sent a malformed JSON body.", {
        cause: err,
      });
    }
    if (!isRecord(parsed) || typeof parsed.text !== "string") {
      throw new TalkError("provider_error", "The speech-to-text answer holds no text.");
    }
    return parsed.text.trim();
  }

  #partial(text: string): void {
    const { onPartial, signal } = this.#setup;
    if (!onPartial || signal.aborted) return;
    try {
      onPartial(text);
    } catch {
      // A listener that throws must not break recognition.
    }
  }
}

/** "en-US" -> "en"; the endpoint takes ISO-639-1 codes. */
function isoLanguage(language: string | undefined): string | undefined {
  const primary = language?.trim().split(/[-_]/)[0]?.toLowerCase();
  return primary && /^[a-z]{2,3}$/.test(primary) ? primary : undefined;
}

function validateOptions(o: ResolvedOptions): void {
  const bad = (field: string, why: string): never => {
    throw new TalkError("config_invalid", `openai-compatible stt: ${field} ${why}`);
  };
  validateEndpointOptions("openai-compatible stt", o);
  if (typeof o.model !== "string" || o.model.trim() === "") bad("model", "is required");
  if (!RESPONSE_FORMATS.has(o.responseFormat)) bad("responseFormat", "must be json, text or verbose_json");
  if (o.stream !== "auto" && typeof o.stream !== "boolean") bad("stream", 'must be true, false or "auto"');
  if (o.stream === true && o.responseFormat === "verbose_json") {
    bad("stream", "cannot be combined with responseFormat verbose_json (the endpoint streams json or text)");
  }
  if (o.language !== undefined && isoLanguage(o.language) === undefined) {
    bad("language", 'must be a language code such as "en"');
  }
  if (o.prompt !== undefined && typeof o.prompt !== "string") bad("prompt", "must be a string");
  if (!Number.isFinite(o.maxAudioSeconds) || o.maxAudioSeconds <= 0 || o.maxAudioSeconds > 3600) {
    bad("maxAudioSeconds", "must be between 0 and 3600");
  }
  if (!Number.isFinite(o.minAudioMs) || o.minAudioMs < 0) bad("minAudioMs", "must be >= 0");
  if (!o.label) bad("label", "must be a non-empty string");
}
