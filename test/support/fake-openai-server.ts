import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { recordClientMessage } from "./wire-capture.js";

/**
 * A local stand-in for the OpenAI API that speaks its documented wire
 * protocol, so providers are tested over real HTTP rather than against mocks
 * of our own interfaces. It checks the bearer key and validates request
 * bodies the way the API does (error objects `{error:{message,type,param,code}}`).
 *
 * Routes so far: POST /v1/realtime/client_secrets, POST /v1/audio/transcriptions
 * (multipart/form-data parsed for real, the WAV header checked, JSON or
 * server-sent events) and POST /v1/audio/speech (raw PCM16 24 kHz streamed in
 * several chunks). Extend with `route()` (HTTP) or by attaching a WebSocket
 * server to `httpServer` (the Realtime socket).
 */

export interface FakeOpenAiServerOptions {
  /** The key requests must present as `Authorization: Bearer <key>`. Default "sk-test-fake-key". */
  apiKey?: string;
  /** false: like a local server, any or no Authorization header is accepted. Default true. */
  requireKey?: boolean;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  /** Parsed JSON, a MultipartBody for multipart/form-data, else the text. */
  body: unknown;
  /** The bytes as received. */
  raw: Buffer;
}

export interface MultipartPart {
  name: string;
  filename?: string;
  contentType?: string;
  data: Buffer;
}

export interface MultipartBody {
  parts: MultipartPart[];
}

/** A WAV file as the fake read it from its header (RIFF, fmt, data chunks). */
export interface ReceivedWav {
  audioFormat: number;
  channels: number;
  sampleRate: number;
  bitsPerSample: number;
  /** Samples of the data chunk (interleaved). */
  samples: Int16Array;
}

/** What one /audio/transcriptions request asked for. */
export interface TranscriptionRequest {
  model: string;
  language?: string;
  prompt?: string;
  responseFormat: string;
  stream: boolean;
  filename: string;
  fileContentType?: string;
  wav: ReceivedWav;
}

/** What one /audio/speech request asked for. */
export interface SpeechRequest {
  model: string;
  input: string;
  voice: string;
  responseFormat: string;
  speed?: number;
  instructions?: string;
}

/** Behaviour of the audio routes; change the fields between requests. */
export interface FakeAudioSettings {
  /** The transcript every transcription answers. */
  transcript: string;
  /** Pause between two transcript.text.delta events, ms. */
  deltaDelayMs: number;
  /** After this many deltas the event stream stalls (never ends). Default never. */
  stallAfterDeltas?: number;
  /** Length of the synthesized tone per input character, ms (at least 200 ms in all). */
  speechMsPerChar: number;
  /** Tone frequency of the synthesized speech, Hz. */
  speechToneHz: number;
  /** Chunks the PCM is streamed in (odd sizes, to split samples across chunks). */
  speechChunks: number;
  /** Pause between two PCM chunks, ms. */
  chunkDelayMs: number;
  /** After this many chunks the speech stream stalls (never ends). Default never. */
  stallAfterChunks?: number;
}

/** OpenAI's speech voices. */
const SPEECH_VOICES = new Set([
  "alloy",
  "ash",
  "ballad",
  "coral",
  "echo",
  "fable",
  "nova",
  "onyx",
  "sage",
  "shimmer",
  "verse",
  "marin",
  "cedar",
]);

/** Rate of OpenAI's `pcm` speech output. */
export const FAKE_SPEECH_RATE = 24_000;

export type FakeRouteHandler = (req: RecordedRequest, res: ServerResponse) => void | Promise<void>;

export interface OpenAiErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

const REALTIME_VOICES = new Set([
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

export class FakeOpenAiServer {
  readonly apiKey: string;
  readonly requireKey: boolean;
  /** Every request that reached a route, in order (bodies parsed as JSON when they are JSON). */
  readonly requests: RecordedRequest[] = [];
  readonly #routes = new Map<string, FakeRouteHandler>();
  readonly #server: Server;
  #forced: { status: number; body: unknown; times: number; path?: string } | undefined;
  #baseUrl: string | undefined;
  #closing: Promise<void> | undefined;
  readonly audio: FakeAudioSettings = {
    transcript: "go forward ten meters",
    deltaDelayMs: 5,
    speechMsPerChar: 20,
    speechToneHz: 440,
    speechChunks: 5,
    chunkDelayMs: 10,
  };
  /** Transcription requests that passed validation, in order. */
  readonly transcriptions: TranscriptionRequest[] = [];
  /** Speech requests that passed validation, in order. */
  readonly speeches: SpeechRequest[] = [];
  /** Audio responses the client closed before their end (an abort reaching the server). */
  audioAborts = 0;

  constructor(options: FakeOpenAiServerOptions = {}) {
    this.apiKey = options.apiKey ?? "sk-test-fake-key";
    this.requireKey = options.requireKey ?? true;
    this.#server = createServer((req, res) => void this.#handle(req, res));
    this.route("POST", "/v1/realtime/client_secrets", (req, res) => this.#clientSecrets(req, res));
    this.route("POST", "/v1/audio/transcriptions", (req, res) => this.#transcriptions(req, res));
    this.route("POST", "/v1/audio/speech", (req, res) => this.#speech(req, res));
  }

  /** The underlying server, for attaching a WebSocket upgrade handler. */
  get httpServer(): Server {
    return this.#server;
  }

  /** Base URL including "/v1", as providers expect it. Only valid after start(). */
  get baseUrl(): string {
    if (!this.#baseUrl) throw new Error("FakeOpenAiServer is not started");
    return this.#baseUrl;
  }

  /** Listens on an ephemeral loopback port; resolves with the base URL (".../v1"). */
  async start(): Promise<string> {
    if (this.#baseUrl) return this.#baseUrl;
    await new Promise<void>((resolve, reject) => {
      this.#server.once("error", reject);
      this.#server.listen(0, "127.0.0.1", () => {
        this.#server.off("error", reject);
        resolve();
      });
    });
    const { port } = this.#server.address() as AddressInfo;
    this.#baseUrl = `http://127.0.0.1:${port}/v1`;
    return this.#baseUrl;
  }

  /** Adds or replaces a route. */
  route(method: string, path: string, handler: FakeRouteHandler): void {
    this.#routes.set(`${method.toUpperCase()} ${path}`, handler);
  }

  /**
   * The next authenticated request (to `path` when given) gets this status and body instead of its
   * normal answer; `times` requests in a row (Infinity: until failNext is called again with 0).
   */
  failNext(status: number, body: unknown, times = 1, path?: string): void {
    this.#forced = times > 0 ? { status, body, times, ...(path ? { path } : {}) } : undefined;
  }

  /** Idempotent. */
  close(): Promise<void> {
    this.#closing ??= new Promise<void>((resolve) => {
      this.#server.closeAllConnections();
      this.#server.close(() => resolve());
    });
    return this.#closing;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const path = new URL(req.url ?? "/", "http://localhost").pathname;
      const handler = this.#routes.get(`${req.method ?? "GET"} ${path}`);
      const raw = await readBody(req);
      const contentType = req.headers["content-type"] ?? "";
      let body: unknown = raw.toString("utf8");
      if (contentType.startsWith("multipart/form-data")) {
        const parsed = parseMultipart(raw, contentType);
        if (typeof parsed === "string")
          return sendError(res, 400, parsed, "invalid_request_error", null, null);
        body = parsed;
      } else if (contentType.startsWith("application/json")) {
        try {
          body = JSON.parse(raw.toString("utf8"));
        } catch {
          return sendError(
            res,
            400,
            "We could not parse the JSON body of your request.",
            "invalid_request_error",
            null,
            null,
          );
        }
      }
      const recorded: RecordedRequest = {
        method: req.method ?? "GET",
        path,
        headers: req.headers,
        body,
        raw,
      };
      if (!handler)
        return sendError(
          res,
          404,
          `Invalid URL (${req.method} ${path})`,
          "invalid_request_error",
          null,
          null,
        );
      this.requests.push(recorded);
      const auth = req.headers.authorization ?? "";
      if (this.requireKey && auth !== `Bearer ${this.apiKey}`) {
        // Like the real API, the message quotes a masked form of the presented key.
        const presented = auth.replace(/^Bearer\s+/i, "");
        const masked =
          presented.length > 8 ? `${presented.slice(0, 6)}****${presented.slice(-4)}` : presented;
        return sendError(
          res,
          401,
          `Incorrect API key provided: ${masked}. You can find your API key at https://platform.openai.com/account/api-keys.`,
          "invalid_request_error",
          null,
          "invalid_api_key",
        );
      }
      const forced = this.#forced;
      if (forced && (forced.path === undefined || forced.path === path)) {
        if (--forced.times <= 0) this.#forced = undefined;
        return sendJson(res, forced.status, forced.body);
      }
      await handler(recorded, res);
    } catch (err) {
      if (!res.headersSent)
        sendError(res, 500, `fake server failure: ${(err as Error).message}`, "server_error", null, null);
    }
  }

  #clientSecrets(req: RecordedRequest, res: ServerResponse): void {
    const problem = validateClientSecretBody(req.body);
    if (problem)
      return sendError(res, 400, problem.message, "invalid_request_error", problem.param, "invalid_value");
    // What the stand-in accepted is type-checked against the SDK's ClientSecretCreateParams (test/wire).
    recordClientMessage("openai-client-secret", req.body);
    const body = req.body as { expires_after?: { seconds?: number }; session: Record<string, unknown> };
    const seconds = body.expires_after?.seconds ?? 600;
    const now = Math.floor(Date.now() / 1000);
    sendJson(res, 200, {
      value: `ek_${randomBytes(12).toString("hex")}`,
      expires_at: now + seconds,
      session: { ...body.session, id: `sess_${randomBytes(8).toString("hex")}`, object: "realtime.session" },
    });
  }

  /** POST /v1/audio/transcriptions: multipart with a WAV `file` and `model`; JSON, text or SSE. */
  async #transcriptions(req: RecordedRequest, res: ServerResponse): Promise<void> {
    const invalid = (message: string, param: string | null): void =>
      sendError(res, 400, message, "invalid_request_error", param, "invalid_value");
    if (!isMultipart(req.body)) return invalid("The request must be multipart/form-data.", null);
    const fields = new Map<string, MultipartPart>();
    for (const part of req.body.parts) fields.set(part.name, part);
    const allowed = new Set([
      "file",
      "model",
      "language",
      "prompt",
      "response_format",
      "stream",
      "temperature",
    ]);
    for (const name of fields.keys()) {
      if (!allowed.has(name)) return invalid(`Unrecognized request argument supplied: ${name}`, name);
    }
    const file = fields.get("file");
    if (!file || file.filename === undefined) return invalid("Missing required parameter: 'file'.", "file");
    const model = fields.get("model")?.data.toString("utf8");
    if (!model) return invalid("Missing required parameter: 'model'.", "model");
    const responseFormat = fields.get("response_format")?.data.toString("utf8") ?? "json";
    if (!["json", "text", "verbose_json", "srt", "vtt"].includes(responseFormat)) {
      return invalid(`Invalid value for response_format: '${responseFormat}'.`, "response_format");
    }
    const streamField = fields.get("stream")?.data.toString("utf8");
    if (streamField !== undefined && streamField !== "true" && streamField !== "false") {
      return invalid(`Invalid value for stream: '${streamField}'.`, "stream");
    }
    const language = fields.get("language")?.data.toString("utf8");
    if (language !== undefined && !/^[a-z]{2,3}$/.test(language)) {
      return invalid(
        `Invalid language '${language}'. Language parameter must be specified in ISO-639-1 format.`,
        "language",
      );
    }
    const wav = parseWavHeader(file.data);
    if (typeof wav === "string")
      return invalid(`Audio file might be corrupted or unsupported: ${wav}`, "file");
    const prompt = fields.get("prompt")?.data.toString("utf8");
    // Like the API: whisper-1 ignores stream=true and answers the whole transcript.
    const stream = streamField === "true" && model !== "whisper-1";
    this.transcriptions.push({
      model,
      responseFormat,
      stream,
      filename: file.filename,
      wav,
      ...(file.contentType !== undefined ? { fileContentType: file.contentType } : {}),
      ...(language !== undefined ? { language } : {}),
      ...(prompt !== undefined ? { prompt } : {}),
    });
    const text = this.audio.transcript;
    if (!stream) {
      if (responseFormat === "text") {
        res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
        res.end(`${text}\n`);
        return;
      }
      const duration = wav.samples.length / wav.channels / wav.sampleRate;
      return sendJson(
        res,
        200,
        responseFormat === "verbose_json"
          ? { task: "transcribe", language: language ?? "english", duration, text, segments: [] }
          : { text, usage: { type: "duration", seconds: Math.ceil(duration) } },
      );
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const closed = this.#watchAbort(res);
    const words = text.split(/(?= )/);
    for (const [i, word] of words.entries()) {
      if (this.audio.stallAfterDeltas !== undefined && i >= this.audio.stallAfterDeltas) return;
      if (closed()) return;
      res.write(`data: ${JSON.stringify({ type: "transcript.text.delta", delta: word })}\n\n`);
      await delay(this.audio.deltaDelayMs);
    }
    if (closed()) return;
    res.end(`data: ${JSON.stringify({ type: "transcript.text.done", text })}\n\n`);
  }

  /** POST /v1/audio/speech: JSON body; `pcm` answers a tone as raw PCM16 24 kHz mono in several chunks. */
  async #speech(req: RecordedRequest, res: ServerResponse): Promise<void> {
    const invalid = (message: string, param: string | null): void =>
      sendError(res, 400, message, "invalid_request_error", param, "invalid_value");
    const b = req.body;
    if (typeof b !== "object" || b === null) return invalid("The body must be a JSON object.", null);
    const body = b as Record<string, unknown>;
    const allowed = new Set([
      "model",
      "input",
      "voice",
      "response_format",
      "speed",
      "instructions",
      "stream_format",
    ]);
    for (const key of Object.keys(body)) {
      if (!allowed.has(key)) return invalid(`Unknown parameter: '${key}'.`, key);
    }
    if (typeof body.model !== "string" || !body.model)
      return invalid("Missing required parameter: 'model'.", "model");
    if (typeof body.input !== "string" || !body.input)
      return invalid("Missing required parameter: 'input'.", "input");
    if (body.input.length > 4096) {
      return invalid("string too long. Expected a string with maximum length 4096.", "input");
    }
    if (typeof body.voice !== "string" || !SPEECH_VOICES.has(body.voice)) {
      return invalid(`Invalid value for voice: '${String(body.voice)}'.`, "voice");
    }
    const format = body.response_format ?? "mp3";
    if (!["mp3", "opus", "aac", "flac", "wav", "pcm"].includes(format as string)) {
      return invalid(`Invalid value for response_format: '${String(format)}'.`, "response_format");
    }
    if (format !== "pcm")
      return invalid("This fake server only synthesizes response_format 'pcm'.", "response_format");
    if (body.speed !== undefined && (typeof body.speed !== "number" || body.speed < 0.25 || body.speed > 4)) {
      return invalid("speed must be between 0.25 and 4.0.", "speed");
    }
    if (body.instructions !== undefined && typeof body.instructions !== "string") {
      return invalid("instructions must be a string.", "instructions");
    }
    this.speeches.push({
      model: body.model,
      input: body.input,
      voice: body.voice,
      responseFormat: format,
      ...(typeof body.speed === "number" ? { speed: body.speed } : {}),
      ...(typeof body.instructions === "string" ? { instructions: body.instructions } : {}),
    });
    const pcm = fakeSpeechSamples(body.input, this.audio);
    const bytes = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
    res.writeHead(200, { "content-type": "audio/pcm", "transfer-encoding": "chunked" });
    const closed = this.#watchAbort(res);
    const cuts = chunkBounds(bytes.byteLength, this.audio.speechChunks);
    for (const [i, [from, to]] of cuts.entries()) {
      if (this.audio.stallAfterChunks !== undefined && i >= this.audio.stallAfterChunks) return;
      if (closed()) return;
      res.write(bytes.subarray(from, to));
      await delay(this.audio.chunkDelayMs);
    }
    if (!closed()) res.end();
  }

  /** Counts a response the client closed before it ended; returns "is it closed?". */
  #watchAbort(res: ServerResponse): () => boolean {
    let closed = false;
    res.on("close", () => {
      closed = true;
      if (!res.writableFinished) this.audioAborts++;
    });
    return () => closed;
  }
}

/** Checks the documented GA body of POST /realtime/client_secrets; returns the first problem. */
export function validateClientSecretBody(body: unknown): { message: string; param: string } | undefined {
  if (typeof body !== "object" || body === null)
    return { message: "The body must be a JSON object.", param: "" };
  const b = body as Record<string, unknown>;
  const allowed = new Set(["expires_after", "session"]);
  for (const key of Object.keys(b)) {
    if (!allowed.has(key)) return { message: `Unknown parameter: '${key}'.`, param: key };
  }
  if (b.expires_after !== undefined) {
    const e = b.expires_after as Record<string, unknown>;
    if (typeof e !== "object" || e === null)
      return { message: "expires_after must be an object.", param: "expires_after" };
    if (e.anchor !== undefined && e.anchor !== "created_at")
      return { message: "anchor must be 'created_at'.", param: "expires_after.anchor" };
    if (
      e.seconds !== undefined &&
      (!Number.isInteger(e.seconds) || (e.seconds as number) < 10 || (e.seconds as number) > 7200)
    ) {
      return { message: "seconds must be an integer between 10 and 7200.", param: "expires_after.seconds" };
    }
  }
  const s = b.session as Record<string, unknown> | undefined;
  if (typeof s !== "object" || s === null)
    return { message: "Missing required parameter: 'session'.", param: "session" };
  if (s.type !== "realtime") return { message: "session.type must be 'realtime'.", param: "session.type" };
  if (s.model !== undefined && typeof s.model !== "string")
    return { message: "session.model must be a string.", param: "session.model" };
  if (s.instructions !== undefined && typeof s.instructions !== "string") {
    return { message: "session.instructions must be a string.", param: "session.instructions" };
  }
  if ("voice" in s)
    return {
      message: "Unknown parameter: 'session.voice'. Use session.audio.output.voice.",
      param: "session.voice",
    };
  const voice = (
    (s.audio as Record<string, unknown> | undefined)?.output as Record<string, unknown> | undefined
  )?.voice;
  if (voice !== undefined && (typeof voice !== "string" || !REALTIME_VOICES.has(voice))) {
    return {
      message: `Invalid value for session.audio.output.voice: '${String(voice)}'.`,
      param: "session.audio.output.voice",
    };
  }
  if (s.tools !== undefined) {
    if (!Array.isArray(s.tools))
      return { message: "session.tools must be an array.", param: "session.tools" };
    for (const [i, t] of (s.tools as Record<string, unknown>[]).entries()) {
      if (t?.type !== "function" || typeof t.name !== "string" || typeof t.parameters !== "object") {
        return {
          message: `session.tools[${i}] must be {type:"function", name, description, parameters}.`,
          param: `session.tools[${i}]`,
        };
      }
    }
  }
  return undefined;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

function isMultipart(body: unknown): body is MultipartBody {
  return typeof body === "object" && body !== null && Array.isArray((body as MultipartBody).parts);
}

/** RFC 7578 multipart/form-data: the parts between the boundary lines, binary-safe. Returns a problem as a string. */
export function parseMultipart(raw: Buffer, contentType: string): MultipartBody | string {
  const match = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const boundary = match?.[1] ?? match?.[2];
  if (!boundary) return "multipart/form-data without a boundary.";
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: MultipartPart[] = [];
  let at = raw.indexOf(delimiter);
  if (at < 0) return "multipart body without its boundary.";
  for (;;) {
    at += delimiter.length;
    if (raw.subarray(at, at + 2).toString() === "--") break; // the closing delimiter
    if (raw.subarray(at, at + 2).toString() !== "\r\n") return "malformed multipart delimiter line.";
    at += 2;
    const headerEnd = raw.indexOf("\r\n\r\n", at);
    if (headerEnd < 0) return "multipart part without a header end.";
    const headers = raw.subarray(at, headerEnd).toString("utf8").split("\r\n");
    const next = raw.indexOf(Buffer.concat([Buffer.from("\r\n"), delimiter]), headerEnd + 4);
    if (next < 0) return "multipart part without a closing boundary.";
    const part: MultipartPart = { name: "", data: raw.subarray(headerEnd + 4, next) };
    for (const line of headers) {
      const [key, ...rest] = line.split(":");
      const value = rest.join(":").trim();
      if (key?.toLowerCase() === "content-disposition") {
        const name = /\bname="([^"]*)"/.exec(value)?.[1];
        const filename = /\bfilename="([^"]*)"/.exec(value)?.[1];
        if (name === undefined || !value.startsWith("form-data"))
          return "multipart part without a form-data name.";
        part.name = name;
        if (filename !== undefined) part.filename = filename;
      } else if (key?.toLowerCase() === "content-type") {
        part.contentType = value;
      }
    }
    if (!part.name) return "multipart part without Content-Disposition.";
    parts.push(part);
    at = next + 2;
  }
  return { parts };
}

/** Reads a WAV file's RIFF / fmt / data chunks; returns the problem as a string. */
export function parseWavHeader(file: Buffer): ReceivedWav | string {
  if (file.length < 44) return "shorter than a WAV header";
  if (file.toString("ascii", 0, 4) !== "RIFF" || file.toString("ascii", 8, 12) !== "WAVE")
    return "not RIFF/WAVE";
  if (file.readUInt32LE(4) !== file.length - 8) return "RIFF size does not match the file";
  let at = 12;
  let fmt: Omit<ReceivedWav, "samples"> | undefined;
  while (at + 8 <= file.length) {
    const id = file.toString("ascii", at, at + 4);
    const size = file.readUInt32LE(at + 4);
    const body = at + 8;
    if (body + size > file.length) return `chunk ${id} runs past the end`;
    if (id === "fmt ") {
      fmt = {
        audioFormat: file.readUInt16LE(body),
        channels: file.readUInt16LE(body + 2),
        sampleRate: file.readUInt32LE(body + 4),
        bitsPerSample: file.readUInt16LE(body + 14),
      };
      const byteRate = file.readUInt32LE(body + 8);
      const blockAlign = file.readUInt16LE(body + 12);
      if (fmt.audioFormat !== 1 || fmt.bitsPerSample !== 16) return "only 16-bit PCM is read here";
      if (blockAlign !== fmt.channels * 2 || byteRate !== fmt.sampleRate * blockAlign)
        return "inconsistent fmt chunk";
    } else if (id === "data") {
      if (!fmt) return "data before fmt";
      if (size % (fmt.channels * 2) !== 0) return "data is not whole frames";
      const samples = new Int16Array(size / 2);
      for (let i = 0; i < samples.length; i++) samples[i] = file.readInt16LE(body + i * 2);
      return { ...fmt, samples };
    }
    at = body + size + (size % 2);
  }
  return "no data chunk";
}

/** The PCM16 24 kHz samples the fake answers for `input`: a tone, `speechMsPerChar` per character, 200 ms at least. */
export function fakeSpeechSamples(input: string, audio: FakeAudioSettings): Int16Array {
  const ms = Math.max(200, input.length * audio.speechMsPerChar);
  return tone(audio.speechToneHz, ms, FAKE_SPEECH_RATE);
}

function tone(hz: number, ms: number, rate: number): Int16Array {
  const n = Math.round((rate * ms) / 1000);
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / rate));
  return out;
}

/** `count` consecutive byte ranges covering `total`, of odd sizes where possible (samples split across chunks). */
function chunkBounds(total: number, count: number): [number, number][] {
  const size = Math.max(1, Math.floor(total / Math.max(1, count)));
  const odd = size % 2 === 0 ? size + 1 : size;
  const out: [number, number][] = [];
  for (let from = 0; from < total; from += odd) out.push([from, Math.min(total, from + odd)]);
  return out;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  type: string,
  param: string | null,
  code: string | null,
): void {
  const body: OpenAiErrorBody = { error: { message, type, param, code } };
  sendJson(res, status, body);
}
