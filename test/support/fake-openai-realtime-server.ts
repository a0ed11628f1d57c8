/**
 * A local server speaking the OpenAI Realtime (GA) WebSocket protocol, so the
 * realtime provider and the call relay are tested over a real socket rather
 * than against mocks of our own interfaces. It does what the real API does
 * with the events we send:
 *
 * - session.update -> session.updated (the merged configuration);
 * - input_audio_buffer.append: counts the audio received (ms, by the session's
 *   input format) and runs an energy detector standing in for server VAD:
 *   speech_started / speech_stopped, commit, the caller's transcription, and
 *   an automatic response; speech during a response cancels it
 *   (interrupt_response);
 * - response.create streams the next scripted reply (response.created,
 *   output_item.added, output_audio.delta..., transcript, response.done);
 * - response.cancel stops it (response.done status "cancelled"), or errors
 *   when no response is active;
 * - conversation.item.truncate is validated like the API: an audio_end_ms
 *   beyond the audio sent for that item gets an error event and nothing is cut.
 *
 * Faults, as a client of the real service meets them: the handshake refused
 * with an HTTP status (refuseConnections), the socket dropped without a
 * close frame (disconnect) or closed with 1011 "internal error"
 * (closeSocket), a `server_error` error event that fails the response in
 * progress (serverError: "Most errors are recoverable and the session will
 * stay open", but the answer is lost), and a response that stops sending
 * with the socket open (holdAfterDeltas, never resumed).
 *
 * Test-only; not part of the product.
 */
import { execFileSync } from "node:child_process";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocket, WebSocketServer } from "ws";
import { decodeMulaw } from "../../src/codecs/mulaw.js";
import { ReceivedLog } from "./received-log.js";
import { bytesOnce } from "./bytes-once.js";
import { recordClientMessage, type WireVendor } from "./wire-capture.js";

export interface FakeRealtimeReply {
  /** Audio in the session's output format (u-law 8 kHz or PCM16 24 kHz). */
  audio: Uint8Array;
  transcript?: string;
  /** Bytes per output_audio.delta. Default: 100 ms of the output format. */
  chunkBytes?: number;
  /** Stream this many deltas, then wait for resume() or a cancel. Default: stream all. */
  holdAfterDeltas?: number;
  /**
   * Wait this long between deltas, ms, as the real service streams an answer over seconds (a 100 ms delta
   * every 50 ms is twice real time). Default: one delta per macrotask, the whole answer at once.
   */
  deltaIntervalMs?: number;
  /** A function call the response makes after its audio item (a second output item, as the model does). */
  toolCall?: FakeToolCall;
}

export interface FakeToolCall {
  name: string;
  arguments: Record<string, unknown>;
  callId?: string;
}

export interface FakeOpenAiRealtimeServerOptions {
  /** Key the handshake must present (Bearer or api-key header). Default "sk-test-realtime". */
  apiKey?: string;
  /** Replies for successive responses; when they run out, 500 ms of a 440 Hz tone. */
  replies?: FakeRealtimeReply[];
  /** RMS (PCM16) above which a 20 ms window counts as voiced. Default 700. */
  speechRms?: number;
  /** Voiced audio needed for speech_started, ms. Default 60. */
  speechStartMs?: number;
  /** Unvoiced audio ending the caller's turn, ms. Default 500. */
  silenceMs?: number;
  /** Transcript reported for each caller turn when transcription is configured. Default "(caller speech)". */
  userTranscript?: string;
  /**
   * A server speaking this protocol with another session shape: merges a
   * session.update's `session` into the current one (in the shape this
   * server keeps: audio.input / audio.output), or returns an error message
   * for an update that server refuses. Default: OpenAI GA.
   */
  sessionDialect?: (current: Json, update: Json) => Json | string;
  /** Plain HTTP requests to this server (e.g. a token endpoint); default 404. */
  onRequest?: (req: IncomingMessage, res: ServerResponse) => void;
  /** Another credential the handshake may present (e.g. an ephemeral token); default: the key only. */
  authorize?: (req: IncomingMessage) => boolean;
  /**
   * Audio deltas already on the wire when a response.cancel arrives: this many more of the response's
   * chunks reach the client before its cancelled response.done, as the real service's in-flight audio
   * does (a cancel crosses the deltas streaming toward the client). Default 0.
   */
  inFlightOnCancel?: number;
  /** Whose protocol the received client messages are, for the SDK type check (test/wire). Default "openai". */
  wireVendor?: WireVendor;
}

export interface ReceivedEvent {
  type: string;
  /** The event as sent, except input_audio_buffer.append whose audio is replaced by its byte length. */
  event: Record<string, unknown>;
}

interface ActiveResponse {
  id: string;
  itemId: string;
  chunks: Uint8Array[];
  next: number;
  holdAt: number;
  /** Between deltas, ms; 0: one per macrotask. */
  intervalMs: number;
  transcript: string;
  toolCall: FakeToolCall | undefined;
}

type Json = Record<string, unknown>;
export type { Json as FakeRealtimeJson };

function bytesPerMs(format: unknown): number {
  const f = (format ?? {}) as { type?: string; rate?: number };
  const type = f.type ?? "audio/pcm";
  return type === "audio/pcm" ? ((f.rate ?? 24000) / 1000) * 2 : 8;
}

export class FakeOpenAiRealtimeServer {
  readonly #log = new ReceivedLog<ReceivedEvent>();
  /** Client events received, in order. */
  readonly received: ReceivedEvent[] = this.#log.items;
  readonly #options: Required<
    Omit<
      FakeOpenAiRealtimeServerOptions,
      "sessionDialect" | "onRequest" | "authorize" | "inFlightOnCancel" | "wireVendor"
    >
  >;
  readonly #inFlightOnCancel: number;
  readonly #wireVendor: WireVendor;
  readonly #dialect: ((current: Json, update: Json) => Json | string) | undefined;
  readonly #http: Server = createServer();
  readonly #wss = new WebSocketServer({ noServer: true });
  #socket: WebSocket | undefined;
  #session: Json = {
    type: "realtime",
    audio: {
      input: { format: { type: "audio/pcm", rate: 24000 }, turn_detection: { type: "server_vad" } },
      output: { format: { type: "audio/pcm", rate: 24000 }, voice: "marin" },
    },
  };
  #seq = 0;
  #replyIndex = 0;
  #active: ActiveResponse | undefined;
  /** Audio ms sent to the client per assistant item (what truncate is checked against). */
  readonly itemAudioMs = new Map<string, number>();
  /** Accepted truncations, in order. */
  readonly truncations: Array<{ itemId: string; audioEndMs: number }> = [];
  readonly #callIds = new Set<string>();
  audioMsReceived = 0;
  #voicedMs = 0;
  #unvoicedMs = 0;
  #speaking = false;
  #userItem: string | undefined;
  #refusals = 0;
  #refusalStatus = 503;
  /** Handshakes accepted, and refused by refuseConnections. */
  connections = 0;
  refusedConnections = 0;

  constructor(options: FakeOpenAiRealtimeServerOptions = {}) {
    this.#options = {
      apiKey: options.apiKey ?? "sk-test-realtime",
      replies: options.replies ?? [],
      speechRms: options.speechRms ?? 700,
      speechStartMs: options.speechStartMs ?? 60,
      silenceMs: options.silenceMs ?? 500,
      userTranscript: options.userTranscript ?? "(caller speech)",
    };
    this.#dialect = options.sessionDialect;
    this.#inFlightOnCancel = options.inFlightOnCancel ?? 0;
    this.#wireVendor = options.wireVendor ?? "openai";
    const onRequest = options.onRequest;
    this.#http.on("request", (req, res) => {
      if (onRequest) onRequest(req, res);
      else res.writeHead(404).end();
    });
    this.#http.on("upgrade", (req, socket, head) => {
      if (this.#refusals > 0) {
        this.#refusals--;
        this.refusedConnections++;
        const status = this.#refusalStatus;
        socket.end(
          `HTTP/1.1 ${status} Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
        );
        return;
      }
      const key = this.#options.apiKey;
      const ok =
        req.headers.authorization === `Bearer ${key}` ||
        req.headers["api-key"] === key ||
        options.authorize?.(req) === true;
      if (!ok) {
        socket.end("HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        return;
      }
      this.lastExtensionsOffered = req.headers["sec-websocket-extensions"];
      this.#wss.handleUpgrade(req, socket, head, (ws) => this.#accept(ws, req.url ?? ""));
    });
  }

  /** ws://127.0.0.1:PORT/v1/realtime once started. */
  url = "";
  /** The query string of the last connection (model=...). */
  lastRequestUrl = "";
  /** The Sec-WebSocket-Extensions header of the last connection (permessage-deflate when offered). */
  lastExtensionsOffered: string | undefined;

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#http.listen(0, "127.0.0.1", resolve));
    this.url = `ws://127.0.0.1:${(this.#http.address() as AddressInfo).port}/v1/realtime`;
    return this.url;
  }

  async close(): Promise<void> {
    for (const ws of this.#wss.clients) ws.terminate();
    this.#wss.close();
    await new Promise<void>((resolve) => this.#http.close(() => resolve()));
  }

  /** The session configuration after the last session.update. */
  get session(): Json {
    return this.#session;
  }

  get activeResponseId(): string | undefined {
    return this.#active?.id;
  }

  /** The assistant item of the response in progress. */
  get activeItemId(): string | undefined {
    return this.#active?.itemId;
  }

  /** Sends a frame as is (a malformed or unexpected server event). */
  sendRaw(data: string): void {
    this.#socket?.send(data);
  }

  /** Drops the client's socket without a close handshake (network loss). */
  disconnect(): void {
    this.#socket?.terminate();
  }

  /** Closes the client's socket with a close frame, e.g. 1011 (the server hit an internal error). */
  closeSocket(code = 1011, reason = "Internal server error"): void {
    this.#socket?.close(code, reason);
  }

  /** Answers the next `count` handshakes with an HTTP error instead of upgrading (Infinity: all of them). */
  refuseConnections(count = Number.POSITIVE_INFINITY, status = 503): void {
    this.#refusals = count;
    this.#refusalStatus = status;
  }

  /**
   * A server-side failure during the response in progress: an `error` event
   * of type server_error, then the response ends `failed` (status_details
   * carrying the error), as the API reports a model failure.
   */
  serverError(message = "The server had an error while processing your request. Sorry about that!"): void {
    const error = { type: "server_error", code: null, message, param: null, event_id: null };
    this.#send({ type: "error", event_id: this.#id("event"), error });
    const active = this.#active;
    if (!active) return;
    this.#active = undefined;
    this.#send({
      type: "response.done",
      response: {
        id: active.id,
        object: "realtime.response",
        status: "failed",
        status_details: { type: "failed", error: { type: "server_error", code: null } },
        output: [],
      },
    });
  }

  /** The instructions of every session.update received, in order (one per provider session here). */
  get instructions(): string[] {
    return this.received
      .filter((e) => e.type === "session.update")
      .map((e) => String(((e.event.session ?? {}) as Json).instructions ?? ""));
  }

  /** Resolves when a received event satisfies `predicate` (checked on every event). */
  waitFor(predicate: (e: ReceivedEvent) => boolean): Promise<ReceivedEvent> {
    return this.#log.waitFor(predicate);
  }

  /** Reports caller speech now, as server VAD would. */
  triggerSpeechStarted(): void {
    this.#speechStarted(this.audioMsReceived);
  }

  /** Starts a response with `reply` (or the next scripted one). */
  respond(reply?: FakeRealtimeReply): void {
    this.#startResponse(reply ?? this.#nextReply());
  }

  /** Continues a response held by holdAfterDeltas. */
  resume(): void {
    if (this.#active) {
      this.#active.holdAt = Number.POSITIVE_INFINITY;
      this.#pump();
    }
  }

  /** A response consisting of one function call, as the model makes it. */
  callTool(call: FakeToolCall): string {
    const responseId = this.#id("resp");
    const itemId = this.#id("item");
    const callId = call.callId ?? this.#id("call");
    this.#callIds.add(callId);
    const args = JSON.stringify(call.arguments);
    const item = {
      id: itemId,
      type: "function_call",
      status: "in_progress",
      call_id: callId,
      name: call.name,
      arguments: "",
    };
    this.#send({
      type: "response.created",
      response: { id: responseId, object: "realtime.response", status: "in_progress", output: [] },
    });
    this.#send({ type: "response.output_item.added", response_id: responseId, output_index: 0, item });
    this.#send({
      type: "response.function_call_arguments.delta",
      response_id: responseId,
      item_id: itemId,
      output_index: 0,
      call_id: callId,
      delta: args,
    });
    this.#send({
      type: "response.function_call_arguments.done",
      response_id: responseId,
      item_id: itemId,
      output_index: 0,
      call_id: callId,
      name: call.name,
      arguments: args,
    });
    const done = { ...item, status: "completed", arguments: args };
    this.#send({ type: "response.output_item.done", response_id: responseId, output_index: 0, item: done });
    this.#send({
      type: "response.done",
      response: {
        id: responseId,
        object: "realtime.response",
        status: "completed",
        output: [done],
        usage: { total_tokens: 30, input_tokens: 20, output_tokens: 10 },
      },
    });
    return callId;
  }

  #accept(ws: WebSocket, requestUrl: string): void {
    this.#socket?.terminate();
    this.#socket = ws;
    this.connections++;
    // A new session starts with no response in flight and no caller speech.
    this.#active = undefined;
    this.#speaking = false;
    this.#voicedMs = 0;
    this.#unvoicedMs = 0;
    this.lastRequestUrl = requestUrl;
    this.#send({
      type: "session.created",
      session: { id: this.#id("sess"), object: "realtime.session", ...this.#session },
    });
    ws.on("message", (data, isBinary) => {
      if (isBinary) return this.#error("invalid_request_error", "Binary frames are not supported.");
      let event: Json;
      try {
        event = JSON.parse(String(data)) as Json;
      } catch {
        return this.#error("invalid_request_error", "Invalid JSON.");
      }
      this.#record(event);
      this.#handle(event);
    });
  }

  #record(event: Json): void {
    recordClientMessage(this.#wireVendor, event);
    const type = String(event.type);
    const recorded =
      type === "input_audio_buffer.append"
        ? { ...event, audio: Buffer.from(String(event.audio), "base64").byteLength }
        : event;
    this.#log.push({ type, event: recorded });
  }

  #handle(event: Json): void {
    switch (event.type) {
      case "session.update": {
        const s = (event.session ?? {}) as Json;
        if (this.#dialect) {
          const merged = this.#dialect(this.#session, s);
          if (typeof merged === "string")
            return this.#error("invalid_request_error", merged, "invalid_value");
          this.#session = merged;
          this.#send({ type: "session.updated", event_id: this.#id("event"), session: this.#session });
          return;
        }
        const audio = { ...(this.#session.audio as Json) } as Json;
        const upd = (s.audio ?? {}) as Json;
        audio.input = { ...(audio.input as Json), ...((upd.input ?? {}) as Json) };
        audio.output = { ...(audio.output as Json), ...((upd.output ?? {}) as Json) };
        this.#session = { ...this.#session, ...s, audio };
        this.#send({ type: "session.updated", event_id: this.#id("event"), session: this.#session });
        return;
      }
      case "input_audio_buffer.append":
        return this.#onAudio(Buffer.from(String(event.audio), "base64"));
      case "input_audio_buffer.commit":
        return this.#commitUserTurn();
      case "response.create":
        return this.#startResponse(this.#nextReply());
      case "response.cancel":
        if (!this.#active)
          return this.#error(
            "invalid_request_error",
            "Cancellation failed: no active response found",
            "response_cancel_not_active",
          );
        for (let i = 0; i < this.#inFlightOnCancel; i++) this.#sendDelta(this.#active);
        return this.#finishResponse("cancelled");
      case "conversation.item.truncate":
        return this.#truncate(String(event.item_id), Number(event.audio_end_ms), event.content_index);
      case "conversation.item.create": {
        const item = (event.item ?? {}) as Json;
        const added = { id: this.#id("item"), ...item, status: "completed" };
        this.#send({ type: "conversation.item.added", previous_item_id: null, item: added });
        this.#send({ type: "conversation.item.done", previous_item_id: null, item: added });
        return;
      }
      default:
        return this.#error(
          "invalid_request_error",
          `Invalid value: '${String(event.type)}'`,
          "invalid_value",
        );
    }
  }

  #onAudio(bytes: Buffer): void {
    const input = ((this.#session.audio as Json).input ?? {}) as Json;
    const perMs = bytesPerMs(input.format);
    const windowBytes = perMs * 20;
    for (let at = 0; at < bytes.length; at += windowBytes) {
      const win = bytes.subarray(at, Math.min(bytes.length, at + windowBytes));
      const ms = win.length / perMs;
      const pcm =
        perMs === 8
          ? decodeMulaw(win)
          : new Int16Array(win.buffer.slice(win.byteOffset, win.byteOffset + (win.length & ~1)));
      let sum = 0;
      for (const s of pcm) sum += s * s;
      const voiced = pcm.length > 0 && Math.sqrt(sum / pcm.length) > this.#options.speechRms;
      this.audioMsReceived += ms;
      if (input.turn_detection === null) continue;
      if (voiced) {
        this.#voicedMs += ms;
        this.#unvoicedMs = 0;
        if (!this.#speaking && this.#voicedMs >= this.#options.speechStartMs)
          this.#speechStarted(this.audioMsReceived - this.#voicedMs);
      } else {
        this.#unvoicedMs += ms;
        if (!this.#speaking) this.#voicedMs = 0;
        if (this.#speaking && this.#unvoicedMs >= this.#options.silenceMs) {
          this.#speaking = false;
          this.#voicedMs = 0;
          this.#send({
            type: "input_audio_buffer.speech_stopped",
            audio_end_ms: Math.round(this.audioMsReceived - this.#unvoicedMs),
            item_id: this.#userItem,
          });
          this.#commitUserTurn();
          const td = (input.turn_detection ?? {}) as Json;
          if (td.create_response !== false) this.#startResponse(this.#nextReply());
        }
      }
    }
  }

  #speechStarted(atMs: number): void {
    this.#speaking = true;
    this.#userItem = this.#id("item");
    this.#send({
      type: "input_audio_buffer.speech_started",
      audio_start_ms: Math.round(atMs),
      item_id: this.#userItem,
    });
    const td = (((this.#session.audio as Json).input ?? {}) as Json).turn_detection as Json | null;
    if (this.#active && td?.interrupt_response !== false) this.#finishResponse("cancelled");
  }

  #commitUserTurn(): void {
    const itemId = this.#userItem ?? this.#id("item");
    this.#userItem = undefined;
    this.#send({ type: "input_audio_buffer.committed", previous_item_id: null, item_id: itemId });
    const item = {
      id: itemId,
      type: "message",
      role: "user",
      content: [{ type: "input_audio", transcript: null }],
    };
    this.#send({ type: "conversation.item.added", previous_item_id: null, item });
    const input = ((this.#session.audio as Json).input ?? {}) as Json;
    if (input.transcription) {
      this.#send({
        type: "conversation.item.input_audio_transcription.completed",
        item_id: itemId,
        content_index: 0,
        transcript: this.#options.userTranscript,
      });
    }
  }

  #nextReply(): FakeRealtimeReply {
    const reply = this.#options.replies[this.#replyIndex++];
    return (
      reply ?? { audio: toneAudio(500, this.#outputIsUlaw() ? "g711_ulaw" : "pcm16"), transcript: "Beep." }
    );
  }

  #outputIsUlaw(): boolean {
    return bytesPerMs(((this.#session.audio as Json).output as Json | undefined)?.format) === 8;
  }

  #startResponse(reply: FakeRealtimeReply): void {
    if (this.#active)
      return this.#error(
        "invalid_request_error",
        "Conversation already has an active response",
        "conversation_already_has_active_response",
      );
    const perMs = bytesPerMs(((this.#session.audio as Json).output as Json).format);
    const chunkBytes = reply.chunkBytes ?? perMs * 100;
    const chunks: Uint8Array[] = [];
    for (let at = 0; at < reply.audio.length; at += chunkBytes)
      chunks.push(reply.audio.subarray(at, at + chunkBytes));
    const active: ActiveResponse = {
      id: this.#id("resp"),
      itemId: this.#id("item"),
      chunks,
      next: 0,
      holdAt: reply.holdAfterDeltas ?? Number.POSITIVE_INFINITY,
      intervalMs: reply.deltaIntervalMs ?? 0,
      transcript: reply.transcript ?? "",
      toolCall: reply.toolCall,
    };
    this.#active = active;
    this.itemAudioMs.set(active.itemId, 0);
    const item = {
      id: active.itemId,
      type: "message",
      role: "assistant",
      status: "in_progress",
      content: [],
    };
    this.#send({
      type: "response.created",
      response: { id: active.id, object: "realtime.response", status: "in_progress", output: [] },
    });
    this.#send({ type: "response.output_item.added", response_id: active.id, output_index: 0, item });
    this.#send({ type: "conversation.item.added", previous_item_id: null, item });
    this.#send({
      type: "response.content_part.added",
      response_id: active.id,
      item_id: active.itemId,
      output_index: 0,
      content_index: 0,
      part: { type: "audio", transcript: "" },
    });
    this.#pump();
  }

  /** Streams deltas one per macrotask so client events (cancel, truncate) can land in between. */
  #pump(): void {
    const active = this.#active;
    if (!active || active.next >= active.holdAt) return;
    if (active.next >= active.chunks.length) return this.#finishResponse("completed");
    this.#sendDelta(active);
    // (A timer that outlives its response, cancelled meanwhile, does not pump the next one.)
    if (active.intervalMs > 0) setTimeout(() => this.#active === active && this.#pump(), active.intervalMs);
    else setImmediate(() => this.#pump());
  }

  /** The response's next audio chunk as an output_audio.delta (its transcript delta with the first). */
  #sendDelta(active: ActiveResponse): void {
    const chunk = active.chunks[active.next];
    if (!chunk) return;
    active.next++;
    const perMs = bytesPerMs(((this.#session.audio as Json).output as Json).format);
    this.itemAudioMs.set(active.itemId, (this.itemAudioMs.get(active.itemId) ?? 0) + chunk.length / perMs);
    const base = { response_id: active.id, item_id: active.itemId, output_index: 0, content_index: 0 };
    this.#send({
      type: "response.output_audio.delta",
      ...base,
      delta: Buffer.from(chunk).toString("base64"),
    });
    if (active.next === 1 && active.transcript)
      this.#send({ type: "response.output_audio_transcript.delta", ...base, delta: active.transcript });
  }

  #finishResponse(status: "completed" | "cancelled"): void {
    const active = this.#active;
    if (!active) return;
    this.#active = undefined;
    const base = { response_id: active.id, item_id: active.itemId, output_index: 0, content_index: 0 };
    if (status === "completed") {
      this.#send({ type: "response.output_audio.done", ...base });
      this.#send({ type: "response.output_audio_transcript.done", ...base, transcript: active.transcript });
    }
    const item = {
      id: active.itemId,
      type: "message",
      role: "assistant",
      status: status === "completed" ? "completed" : "incomplete",
      content: [{ type: "output_audio", transcript: active.transcript }],
    };
    this.#send({ type: "response.output_item.done", response_id: active.id, output_index: 0, item });
    const call =
      status === "completed" && active.toolCall ? this.#functionCall(active.id, active.toolCall) : [];
    this.#send({
      type: "response.done",
      response: {
        id: active.id,
        object: "realtime.response",
        status,
        output: [item, ...call],
        usage: { total_tokens: 50, input_tokens: 30, output_tokens: 20 },
      },
    });
  }

  /** A function call item of response `responseId` (output_index 1, after its audio), streamed; returns the item. */
  #functionCall(responseId: string, call: FakeToolCall): Json[] {
    const itemId = this.#id("item");
    const callId = call.callId ?? this.#id("call");
    this.#callIds.add(callId);
    const args = JSON.stringify(call.arguments);
    const item = {
      id: itemId,
      type: "function_call",
      status: "in_progress",
      call_id: callId,
      name: call.name,
    };
    this.#send({
      type: "response.output_item.added",
      response_id: responseId,
      output_index: 1,
      item: { ...item, arguments: "" },
    });
    this.#send({
      type: "response.function_call_arguments.done",
      response_id: responseId,
      item_id: itemId,
      output_index: 1,
      call_id: callId,
      name: call.name,
      arguments: args,
    });
    const done = { ...item, status: "completed", arguments: args };
    this.#send({ type: "response.output_item.done", response_id: responseId, output_index: 1, item: done });
    return [done];
  }

  #truncate(itemId: string, audioEndMs: number, contentIndex: unknown): void {
    const sentMs = this.itemAudioMs.get(itemId);
    if (sentMs === undefined)
      return this.#error(
        "invalid_request_error",
        `Item with item_id '${itemId}' not found or is not an assistant audio message.`,
      );
    if (contentIndex !== 0) return this.#error("invalid_request_error", "content_index must be 0 for audio.");
    if (!Number.isFinite(audioEndMs) || audioEndMs < 0)
      return this.#error("invalid_request_error", "audio_end_ms must be a non-negative integer.");
    if (audioEndMs > sentMs) {
      // The API's wording: it refuses an end beyond the audio it sent for the item.
      return this.#error(
        "invalid_request_error",
        `Audio content of ${Math.round(sentMs)}ms is already shorter than ${audioEndMs}ms`,
      );
    }
    this.truncations.push({ itemId, audioEndMs });
    this.#send({
      type: "conversation.item.truncated",
      event_id: this.#id("event"),
      item_id: itemId,
      content_index: 0,
      audio_end_ms: audioEndMs,
    });
  }

  #error(type: string, message: string, code: string | null = null): void {
    this.#send({
      type: "error",
      event_id: this.#id("event"),
      error: { type, code, message, param: null, event_id: null },
    });
  }

  #send(event: Json): void {
    const ws = this.#socket;
    if (ws?.readyState !== WebSocket.OPEN) return;
    ws.send(JSON.stringify({ event_id: this.#id("event"), ...event }));
  }

  #id(prefix: string): string {
    return `${prefix}_fake${(++this.#seq).toString().padStart(6, "0")}`;
  }
}

/** A sine tone in u-law 8 kHz or PCM16 24 kHz (little-endian bytes). */
export function toneAudio(ms: number, format: "g711_ulaw" | "pcm16", hz = 440): Uint8Array {
  const rate = format === "g711_ulaw" ? 8000 : 24000;
  const n = Math.round((rate * ms) / 1000);
  const pcm = new Int16Array(n);
  for (let i = 0; i < n; i++) pcm[i] = Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / rate));
  if (format === "pcm16") return new Uint8Array(pcm.buffer);
  return new Uint8Array(
    execFileSync(
      "ffmpeg",
      ["-v", "error", "-f", "s16le", "-ar", "8000", "-ac", "1", "-i", "pipe:0", "-f", "mulaw", "pipe:1"],
      { input: Buffer.from(pcm.buffer) },
    ),
  );
}

/** Real synthesized speech (espeak-ng, converted by ffmpeg) in u-law 8 kHz or PCM16 24 kHz; made once per text. */
export function speechAudio(text: string, format: "g711_ulaw" | "pcm16"): Uint8Array {
  return bytesOnce(`speech\n${format}\n${text}`, () => {
    const wav = execFileSync("espeak-ng", ["--stdout", text]);
    const out = format === "g711_ulaw" ? ["-ar", "8000", "-f", "mulaw"] : ["-ar", "24000", "-f", "s16le"];
    return new Uint8Array(
      execFileSync("ffmpeg", ["-v", "error", "-i", "pipe:0", "-ac", "1", ...out, "pipe:1"], { input: wav }),
    );
  });
}
