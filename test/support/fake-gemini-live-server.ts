/**
 * A local stand-in for Google's Gemini Live API, written from its
 * documentation (https://ai.google.dev/api/live,
 * https://ai.google.dev/gemini-api/docs/live,
 * https://ai.google.dev/gemini-api/docs/ephemeral-tokens):
 *
 * - `wss://…/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent`
 *   with the key (`x-goog-api-key` or `?key=`), or the v1alpha
 *   `BidiGenerateContentConstrained` method with `?access_token=` an
 *   unexpired, unused ephemeral token. As the service does, the socket
 *   opens whatever the credential and a bad one is refused on the first
 *   frame (close 1008);
 * - the first message must be `{setup}` with a `models/…` model (else close
 *   1007); a function declaration's `parameters` must be Gemini's Schema:
 *   a field it does not have (`additionalProperties`, `$schema`, `const`...)
 *   is refused as the API refuses it ("Invalid JSON payload received. Unknown
 *   name ... Cannot find field.", public reports: felinics/Memoh#620,
 *   nanbingxyz/5ire#42), and `parameters` with `parametersJsonSchema` too
 *   (mutually exclusive); JSON Schema belongs in `parametersJsonSchema`;
 *   answered `{setupComplete: {}}`; a token's bound setup replaces
 *   the client's. Server messages go out in binary frames holding JSON;
 * - `realtimeInput.audio` (`audio/pcm;rate=16000`, base64 PCM16): an energy
 *   detector stands in for automatic activity detection: caller speech sends
 *   `inputTranscription`; over the model it interrupts it
 *   (`interrupted`, then `turnComplete`) unless activityHandling is
 *   NO_INTERRUPTION; silence after speech starts the model's turn:
 *   `modelTurn.parts[].inlineData` (`audio/pcm;rate=24000`),
 *   `outputTranscription`, `generationComplete`, then `turnComplete` with
 *   `usageMetadata`;
 * - `clientContent` with `turnComplete` starts a model turn;
 * - `toolCall.functionCalls[]` on request; `toolResponse.functionResponses[]`
 *   must answer a pending call by id and name with an object `response`
 *   (else close 1007), then the model answers. Caller speech while calls are
 *   pending interrupts that server turn: `toolCallCancellation.ids` ("should
 *   have been not executed and should be cancelled ... occurs only in cases
 *   where the clients interrupt server turns"), and those calls are no
 *   longer pending (a response to one is refused like any unknown id).
 * - `POST /v1alpha/auth_tokens` with the key: `{uses, expireTime,
 *   newSessionExpireTime, bidiGenerateContentSetup}`, each optional (1 use,
 *   0 meaning no limit; 30 min; 60 s; both under 20 h ahead; no bound setup:
 *   the client's is used) -> `{name, …}`.
 *
 * Test-only; not part of the product.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocket, WebSocketServer } from "ws";
import { ReceivedLog } from "./received-log.js";
import { recordClientMessage } from "./wire-capture.js";

type Json = Record<string, unknown>;

export const GEMINI_TEST_KEY = "AIzaSyTestKey0123456789abcdefghijklmnop";
const V1BETA = "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent";
const V1ALPHA = "/ws/google.ai.generativelanguage.v1alpha.GenerativeService.BidiGenerateContentConstrained";

export interface FakeGeminiReply {
  /** PCM16 24 kHz little-endian. */
  audio: Uint8Array;
  transcript?: string;
  /** Bytes per inlineData chunk. Default 100 ms (4 800). */
  chunkBytes?: number;
}

export interface FakeGeminiOptions {
  apiKey?: string;
  replies?: FakeGeminiReply[];
  /** RMS above which 20 ms count as voiced. Default 700. */
  speechRms?: number;
  /** Unvoiced audio ending the caller's turn, ms. Default 500. */
  silenceMs?: number;
  userTranscript?: string;
}

interface Token {
  name: string;
  uses: number;
  /** Created with `uses: 0`: no limit. */
  unlimited: boolean;
  expireTime: number;
  newSessionExpireTime: number;
  /** The bound setup; undefined: the client's own is used. */
  setup: Json | undefined;
}

export class FakeGeminiLiveServer {
  /** Client messages received (realtimeInput audio replaced by its byte length). */
  readonly #log = new ReceivedLog<Json>();
  readonly received: Json[] = this.#log.items;
  readonly tokenRequests: Json[] = [];
  readonly tokens: Token[] = [];
  /** Function call ids cancelled by toolCallCancellation, in order. */
  readonly cancelledCalls: string[] = [];
  /** The setup in force (a token's, when the session was opened with one). */
  setup: Json | undefined;
  audioMsReceived = 0;
  connections = 0;
  url = "";
  readonly #o: Required<FakeGeminiOptions>;
  readonly #http: Server = createServer((req, res) => void this.#request(req, res));
  readonly #wss = new WebSocketServer({ noServer: true });
  #socket: WebSocket | undefined;
  #replyIndex = 0;
  #speaking = false;
  #voicedMs = 0;
  #unvoicedMs = 0;
  /** The model turn being streamed. */
  #turn: { chunks: Uint8Array[]; next: number; transcript: string } | undefined;
  readonly #pendingCalls = new Map<string, string>();
  #seq = 0;

  constructor(options: FakeGeminiOptions = {}) {
    this.#o = {
      apiKey: options.apiKey ?? GEMINI_TEST_KEY,
      replies: options.replies ?? [],
      speechRms: options.speechRms ?? 700,
      silenceMs: options.silenceMs ?? 500,
      userTranscript: options.userTranscript ?? "(caller speech)",
    };
    this.#http.on("upgrade", (req, socket, head) => {
      // The SDK joins its base URL (a trailing "/") and "/ws/..." into "//ws/...", which the service accepts.
      const url = new URL((req.url ?? "/").replace(/^\/+/, "/"), "http://x");
      if (url.pathname !== V1BETA && url.pathname !== V1ALPHA) {
        socket.end("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        return;
      }
      this.#wss.handleUpgrade(req, socket, head, (ws) => this.#accept(ws, req, url));
    });
  }

  /** The API root (http://127.0.0.1:PORT) once started. */
  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#http.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.#http.address() as AddressInfo).port}`;
    return this.url;
  }

  async close(): Promise<void> {
    for (const ws of this.#wss.clients) ws.terminate();
    this.#wss.close();
    await new Promise<void>((resolve) => this.#http.close(() => resolve()));
  }

  get modelSpeaking(): boolean {
    return this.#turn !== undefined;
  }

  waitFor(predicate: (m: Json) => boolean): Promise<Json> {
    return this.#log.waitFor(predicate);
  }

  /** Starts a model turn now (the next scripted reply, or `reply`). */
  respond(reply?: FakeGeminiReply): void {
    this.#startTurn(reply);
  }

  /** The caller speaks over the model, as activity detection reports it. */
  interrupt(): void {
    this.#callerSpoke();
  }

  /** A function call, as the model makes it; returns its id. */
  callTool(name: string, args: Json): string {
    const id = `function-call-${++this.#seq}`;
    this.#pendingCalls.set(id, name);
    this.#send({ toolCall: { functionCalls: [{ id, name, args }] } });
    return id;
  }

  /** Sends a frame as is (text), e.g. a malformed message. */
  sendRaw(data: string): void {
    this.#socket?.send(data);
  }

  sendMessage(message: Json): void {
    this.#send(message);
  }

  /** Closes the client's socket with a code and reason, as the service ends a session on an error. */
  closeSocket(code = 1011, reason = "Internal error encountered."): void {
    this.#socket?.close(code, reason);
  }

  #accept(ws: WebSocket, req: IncomingMessage, url: URL): void {
    this.#socket?.terminate();
    this.#socket = ws;
    this.connections++;
    this.setup = undefined;
    this.#turn = undefined;
    this.#speaking = false;
    let token: Token | undefined;
    let authorized = false;
    if (url.pathname === V1BETA) {
      authorized =
        req.headers["x-goog-api-key"] === this.#o.apiKey || url.searchParams.get("key") === this.#o.apiKey;
    } else {
      token = this.tokens.find((t) => t.name === url.searchParams.get("access_token"));
      const now = Date.now();
      authorized =
        token !== undefined &&
        (token.uses > 0 || token.unlimited) &&
        now < token.newSessionExpireTime &&
        now < token.expireTime;
      if (authorized && !token!.unlimited) token!.uses--;
    }
    ws.on("message", (data) => {
      let message: Json;
      try {
        message = JSON.parse(String(data)) as Json;
      } catch {
        ws.close(1007, "Invalid JSON payload received.");
        return;
      }
      this.#record(message);
      if (!authorized) {
        ws.close(1008, "API key not valid. Please pass a valid API key.");
        return;
      }
      if (this.setup === undefined) {
        const setup = message.setup as Json | undefined;
        if (!setup || typeof setup.model !== "string" || !setup.model.startsWith("models/")) {
          ws.close(1007, "Request contains an invalid argument: setup must come first, with models/{model}.");
          return;
        }
        const refused = functionDeclarationError(setup, "setup");
        if (refused !== undefined) {
          ws.close(1007, refused.slice(0, 120));
          return;
        }
        this.setup = token?.setup ?? setup;
        this.#send({ setupComplete: {} });
        return;
      }
      this.#handle(message);
    });
  }

  #record(message: Json): void {
    recordClientMessage("gemini", message);
    const input = message.realtimeInput as Json | undefined;
    const audio = input?.audio as Json | undefined;
    const recorded = audio
      ? { realtimeInput: { audio: { ...audio, data: Buffer.from(String(audio.data), "base64").byteLength } } }
      : message;
    this.#log.push(recorded);
  }

  #handle(message: Json): void {
    const input = message.realtimeInput as Json | undefined;
    if (input?.audio) {
      const audio = input.audio as Json;
      if (audio.mimeType !== "audio/pcm;rate=16000") {
        this.#socket?.close(1007, `Unsupported mime type ${String(audio.mimeType)}.`);
        return;
      }
      this.#onAudio(Buffer.from(String(audio.data), "base64"));
      return;
    }
    if (input?.audioStreamEnd === true || typeof input?.text === "string") return;
    const content = message.clientContent as Json | undefined;
    if (content) {
      if (content.turnComplete === true) this.#startTurn();
      return;
    }
    const toolResponse = message.toolResponse as Json | undefined;
    if (toolResponse) {
      for (const r of (toolResponse.functionResponses ?? []) as Json[]) {
        const name = this.#pendingCalls.get(String(r.id));
        if (name === undefined || r.name !== name || typeof r.response !== "object" || r.response === null) {
          this.#socket?.close(1007, `Invalid function response for call ${String(r.id)}.`);
          return;
        }
        this.#pendingCalls.delete(String(r.id));
      }
      this.#startTurn();
      return;
    }
    this.#socket?.close(1007, "Request contains an invalid argument.");
  }

  #onAudio(bytes: Buffer): void {
    const windowBytes = 640; // 20 ms at 16 kHz
    for (let at = 0; at < bytes.length; at += windowBytes) {
      const win = bytes.subarray(at, Math.min(bytes.length, at + windowBytes));
      const pcm = new Int16Array(win.buffer.slice(win.byteOffset, win.byteOffset + (win.length & ~1)));
      let sum = 0;
      for (const s of pcm) sum += s * s;
      const voiced = pcm.length > 0 && Math.sqrt(sum / pcm.length) > this.#o.speechRms;
      const ms = win.length / 32;
      this.audioMsReceived += ms;
      if (voiced) {
        this.#voicedMs += ms;
        this.#unvoicedMs = 0;
        if (!this.#speaking && this.#voicedMs >= 60) this.#callerSpoke();
      } else {
        this.#unvoicedMs += ms;
        if (!this.#speaking) this.#voicedMs = 0;
        if (this.#speaking && this.#unvoicedMs >= this.#o.silenceMs) {
          this.#speaking = false;
          this.#voicedMs = 0;
          this.#startTurn();
        }
      }
    }
  }

  #callerSpoke(): void {
    this.#speaking = true;
    this.#send({ serverContent: { inputTranscription: { text: this.#o.userTranscript } } });
    const config = (this.setup?.realtimeInputConfig ?? {}) as Json;
    if (this.#pendingCalls.size > 0 && config.activityHandling !== "NO_INTERRUPTION") {
      const ids = [...this.#pendingCalls.keys()];
      this.#pendingCalls.clear();
      this.cancelledCalls.push(...ids);
      this.#send({ toolCallCancellation: { ids } });
    }
    if (this.#turn && config.activityHandling !== "NO_INTERRUPTION") {
      this.#turn = undefined;
      this.#send({ serverContent: { interrupted: true } });
      this.#send({ serverContent: { turnComplete: true } });
    }
  }

  #startTurn(reply?: FakeGeminiReply): void {
    if (this.#turn) return;
    const r = reply ?? this.#o.replies[this.#replyIndex++] ?? { audio: tone24k(500), transcript: "Beep." };
    const size = r.chunkBytes ?? 4800;
    const chunks: Uint8Array[] = [];
    for (let at = 0; at < r.audio.length; at += size) chunks.push(r.audio.subarray(at, at + size));
    this.#turn = { chunks, next: 0, transcript: r.transcript ?? "" };
    this.#pump();
  }

  #pump(): void {
    const turn = this.#turn;
    if (!turn) return;
    if (turn.next >= turn.chunks.length) {
      this.#turn = undefined;
      this.#send({ serverContent: { generationComplete: true } });
      this.#send({
        serverContent: { turnComplete: true },
        usageMetadata: { promptTokenCount: 30, responseTokenCount: 20, totalTokenCount: 50 },
      });
      return;
    }
    const chunk = turn.chunks[turn.next++]!;
    const parts = [
      { inlineData: { mimeType: "audio/pcm;rate=24000", data: Buffer.from(chunk).toString("base64") } },
    ];
    this.#send({ serverContent: { modelTurn: { parts } } });
    if (turn.next === 1 && turn.transcript)
      this.#send({ serverContent: { outputTranscription: { text: turn.transcript } } });
    setImmediate(() => this.#pump());
  }

  async #request(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const json = (status: number, body: unknown): void => {
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    };
    if (req.method !== "POST" || req.url?.split("?")[0] !== "/v1alpha/auth_tokens")
      return json(404, { error: { code: 404, message: "Not found", status: "NOT_FOUND" } });
    const key = req.headers["x-goog-api-key"] ?? new URL(req.url, "http://x").searchParams.get("key");
    if (key !== this.#o.apiKey)
      return json(400, {
        error: {
          code: 400,
          message: "API key not valid. Please pass a valid API key.",
          status: "INVALID_ARGUMENT",
        },
      });
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body: Json;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Json;
    } catch {
      return json(400, {
        error: { code: 400, message: "Invalid JSON payload received.", status: "INVALID_ARGUMENT" },
      });
    }
    this.tokenRequests.push(body);
    // Each field is optional: expireTime 30 min ahead, newSessionExpireTime 60 s, uses 1 (0: no limit),
    // both times less than 20 h ahead; without a bound setup the client's own is used.
    const now = Date.now();
    const time = (value: unknown, fallbackMs: number): number =>
      value === undefined ? now + fallbackMs : Date.parse(String(value));
    const expire = time(body.expireTime, 30 * 60_000);
    const newSession = time(body.newSessionExpireTime, 60_000);
    const setup = body.bidiGenerateContentSetup as Json | undefined;
    const tooFar = now + 20 * 3600_000;
    if (
      Number.isNaN(expire) ||
      Number.isNaN(newSession) ||
      expire >= tooFar ||
      newSession >= tooFar ||
      (body.uses !== undefined && (!Number.isInteger(body.uses) || (body.uses as number) < 0)) ||
      (setup !== undefined && typeof setup.model !== "string")
    )
      return json(400, {
        error: { code: 400, message: "Invalid auth token request.", status: "INVALID_ARGUMENT" },
      });
    const refused =
      setup === undefined ? undefined : functionDeclarationError(setup, "bidi_generate_content_setup");
    if (refused !== undefined)
      return json(400, { error: { code: 400, message: refused, status: "INVALID_ARGUMENT" } });
    const token: Token = {
      name: `auth_tokens/fake${++this.#seq}${Math.random().toString(36).slice(2)}`,
      uses: typeof body.uses === "number" ? body.uses : 1,
      unlimited: body.uses === 0,
      expireTime: expire,
      newSessionExpireTime: newSession,
      setup,
    };
    this.tokens.push(token);
    json(200, {
      name: token.name,
      uses: token.uses,
      expireTime: new Date(expire).toISOString(),
      newSessionExpireTime: new Date(newSession).toISOString(),
    });
  }

  #send(message: Json): void {
    const ws = this.#socket;
    if (ws?.readyState !== WebSocket.OPEN) return;
    // The service sends its JSON in binary frames.
    ws.send(Buffer.from(JSON.stringify(message)), { binary: true });
  }
}

/** A 440 Hz tone as PCM16 24 kHz little-endian bytes. */
export function tone24k(ms: number, hz = 440): Uint8Array {
  const n = Math.round(24 * ms);
  const pcm = new Int16Array(n);
  for (let i = 0; i < n; i++) pcm[i] = Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / 24000));
  return new Uint8Array(pcm.buffer);
}

/** A tone as PCM16 16 kHz little-endian bytes (caller audio). */
export function tone16k(ms: number, hz = 300, amplitude = 8000): Uint8Array {
  const n = Math.round(16 * ms);
  const pcm = new Int16Array(n);
  for (let i = 0; i < n; i++) pcm[i] = Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / 16000));
  return new Uint8Array(pcm.buffer);
}

/** The fields of Gemini's Schema (FunctionDeclaration.parameters), from the API reference. */
const SCHEMA_FIELDS = new Set([
  "type",
  "format",
  "title",
  "description",
  "nullable",
  "enum",
  "maxItems",
  "minItems",
  "properties",
  "required",
  "minProperties",
  "maxProperties",
  "minLength",
  "maxLength",
  "pattern",
  "example",
  "anyOf",
  "propertyOrdering",
  "default",
  "items",
  "minimum",
  "maximum",
]);

/** The API's refusal of a setup's function declarations, or undefined when they are well formed. */
function functionDeclarationError(setup: Json, at: string): string | undefined {
  const tools = Array.isArray(setup.tools) ? (setup.tools as Json[]) : [];
  for (const [t, tool] of tools.entries()) {
    const declarations = Array.isArray(tool.functionDeclarations)
      ? (tool.functionDeclarations as Json[])
      : [];
    for (const [d, declaration] of declarations.entries()) {
      const where = `${at}.tools[${t}].function_declarations[${d}]`;
      if (declaration.parameters !== undefined && declaration.parametersJsonSchema !== undefined)
        return `Request contains an invalid argument: ${where} sets both parameters and parameters_json_schema.`;
      if (declaration.parameters !== undefined) {
        const bad = badSchemaField(declaration.parameters, `${where}.parameters`);
        if (bad?.kind === "unknown")
          return `Invalid JSON payload received. Unknown name "${bad.name}" at '${bad.at}': Cannot find field.`;
        if (bad?.kind === "type")
          return `Invalid value at '${bad.at}.type' (type.googleapis.com/google.ai.generativelanguage.v1beta.Type), "${bad.name}"`;
      }
    }
  }
  return undefined;
}

/** Gemini's Type enum (the names the API parses). */
const SCHEMA_TYPES = new Set([
  "TYPE_UNSPECIFIED",
  "STRING",
  "NUMBER",
  "INTEGER",
  "BOOLEAN",
  "ARRAY",
  "OBJECT",
  "NULL",
]);

/** A field Gemini's Schema does not have, or a `type` not among its enum names (JSON Schema's lower case). */
function badSchemaField(
  schema: unknown,
  at: string,
): { kind: "unknown" | "type"; name: string; at: string } | undefined {
  if (typeof schema !== "object" || schema === null) return undefined;
  for (const [name, value] of Object.entries(schema as Json)) {
    if (!SCHEMA_FIELDS.has(name)) return { kind: "unknown", name, at };
    if (name === "type" && !SCHEMA_TYPES.has(String(value))) return { kind: "type", name: String(value), at };
    if (name === "properties" && typeof value === "object" && value !== null)
      for (const [i, child] of Object.values(value as Json).entries()) {
        const found = badSchemaField(child, `${at}.properties[${i}].value`);
        if (found) return found;
      }
    if (name === "items") {
      const found = badSchemaField(value, `${at}.items`);
      if (found) return found;
    }
    if (name === "anyOf" && Array.isArray(value))
      for (const [i, child] of value.entries()) {
        const found = badSchemaField(child, `${at}.any_of[${i}]`);
        if (found) return found;
      }
  }
  return undefined;
}
