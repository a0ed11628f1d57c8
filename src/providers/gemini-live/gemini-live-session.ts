/**
 * A Gateway-owned Gemini Live session over the BidiGenerateContent
 * WebSocket: `setup` first, `setupComplete` back, then `realtimeInput`
 * audio in, `serverContent` / `toolCall` out (mapped by GeminiTurnTracker),
 * `toolResponse` for tool results and `clientContent` for text turns.
 *
 * What the API cannot do, and what this does instead:
 * - no cancel: `cancelResponse()` drops the rest of the model turn here (its
 *   audio never reaches the caller); the server's own activity detection
 *   (`START_OF_ACTIVITY_INTERRUPTS`, the default) stops generation when the
 *   caller speaks and reports `interrupted`;
 * - no truncate: `truncate()` does nothing; the server keeps in its history
 *   what it had generated and sent, heard or not (declared `truncate: false`);
 * - no out-of-band responses: `speakText` is a user turn asking for the line
 *   read aloud (the line is content in that turn, never the session's
 *   instructions), so it joins the conversation as the model's own answer.
 * Function calls the server cancels (`toolCallCancellation`, when the caller
 * interrupts a turn with calls pending) are never answered: a result
 * submitted for one afterwards is dropped.
 * Errors: the server ends the socket with a close code and reason (1007 bad
 * setup or message, 1008 policy, 1011 internal): during setup that rejects
 * the connection as `provider_error` with the reason; later it is a fatal
 * `connection_lost` carrying the reason.
 */
import { bytesPerSecond, cancelledError, NOOP_LOGGER, TalkError } from "../../core/index.js";
import { AudioAppendBatcher } from "../support/audio-append-batcher.js";
import type {
  RealtimeProviderEvent,
  RealtimeSessionOptions,
  RealtimeVoiceSession,
  TalkLogger,
} from "../../core/index.js";
import { JsonSocket, type Json } from "../support/json-socket.js";
import { GeminiTurnTracker } from "./gemini-live-events.js";
import { assertGeminiFormat, buildGeminiSetup, type GeminiSetupSettings } from "./gemini-live-setup.js";

export interface GeminiLiveConnectOptions extends GeminiSetupSettings {
  apiKey: string;
  /** The BidiGenerateContent WebSocket URL. */
  url: string;
  connectTimeoutMs: number;
  closeTimeoutMs?: number;
  maxPayloadBytes?: number;
  logger?: TalkLogger;
}

const LABEL = "Gemini Live";
/** Cancelled call ids remembered until their (late) result arrives. */
const CANCELLED_CALL_MEMORY = 64;

/** Opens a session; resolves after `setupComplete` (having emitted `ready`). */
export async function connectGeminiLive(
  options: GeminiLiveConnectOptions,
  sessionOptions: RealtimeSessionOptions,
  onEvent: (event: RealtimeProviderEvent) => void,
): Promise<RealtimeVoiceSession> {
  assertGeminiFormat(sessionOptions.inputFormat, "input");
  assertGeminiFormat(sessionOptions.outputFormat, "output");
  if (sessionOptions.signal.aborted) throw cancelledError(sessionOptions.signal);
  const session = new GeminiLiveSession(options, sessionOptions, onEvent);
  await session.open(buildGeminiSetup(sessionOptions, options));
  return session;
}

export class GeminiLiveSession implements RealtimeVoiceSession {
  readonly #onEvent: (event: RealtimeProviderEvent) => void;
  readonly #log: TalkLogger;
  readonly #socket: JsonSocket;
  readonly #turns: GeminiTurnTracker;
  readonly #mimeType: string;
  readonly #input: AudioAppendBatcher;
  /** Calls the server cancelled (toolCallCancellation) whose results are dropped. */
  readonly #cancelledCalls = new Set<string>();

  constructor(
    options: GeminiLiveConnectOptions,
    sessionOptions: RealtimeSessionOptions,
    onEvent: (event: RealtimeProviderEvent) => void,
  ) {
    this.#onEvent = onEvent;
    this.#log = options.logger ?? NOOP_LOGGER;
    this.#turns = new GeminiTurnTracker(sessionOptions.outputFormat);
    this.#mimeType = `audio/pcm;rate=${sessionOptions.inputFormat.sampleRate}`;
    this.#input = new AudioAppendBatcher(
      sessionOptions.inputAppendMs ?? 0,
      bytesPerSecond(sessionOptions.inputFormat),
      (audio) => this.#socket.send({ realtimeInput: { audio: { data: audio, mimeType: this.#mimeType } } }),
    );
    this.#socket = new JsonSocket(
      {
        url: options.url,
        headers: { "x-goog-api-key": options.apiKey },
        label: LABEL,
        connectTimeoutMs: options.connectTimeoutMs,
        closeTimeoutMs: options.closeTimeoutMs ?? 2_000,
        maxPayloadBytes: options.maxPayloadBytes ?? 16 * 1024 * 1024,
        // The service sends its JSON messages in binary frames.
        binaryJson: true,
        signal: sessionOptions.signal,
        logger: this.#log,
      },
      {
        setup: (message) => (message.setupComplete !== undefined ? "ready" : undefined),
        onReady: () => this.#emit({ type: "ready" }),
        onMessage: (message) => this.#message(message),
        onInvalidFrame: () =>
          this.#emit({
            type: "error",
            code: "invalid_provider_event",
            message: "Gemini Live sent a frame that is not a JSON object.",
            fatal: false,
          }),
        onLost: (code, reason) =>
          this.#emit({
            type: "error",
            code: "connection_lost",
            message: `Gemini Live closed the socket (${code}${reason ? `: ${reason.slice(0, 300)}` : ""}).`,
            fatal: true,
          }),
        onFinished: (reason) => {
          this.#input.close();
          this.#emit({ type: "closed", reason });
        },
      },
    );
  }

  get state(): JsonSocket["state"] {
    return this.#socket.state;
  }

  /** Connects and sends `setup`; a close during setup is the server refusing it (its reason says why). */
  async open(setup: Json): Promise<void> {
    try {
      await this.#socket.open({ setup });
    } catch (err) {
      if (
        err instanceof TalkError &&
        err.code === "provider_unavailable" &&
        err.details?.closeCode !== undefined
      )
        throw new TalkError(
          "provider_error",
          err.message.replace("closed the connection during setup", "refused the setup"),
          {
            details: err.details,
          },
        );
      throw err;
    }
  }

  appendAudio(data: Uint8Array): void {
    this.#socket.assertReady(); // refused at once, not when the piece would go out
    this.#input.push(data);
  }

  /** The caller's audio stream paused (push-to-talk released): the server flushes what it holds. */
  commitAudio(): void {
    this.#send({ realtimeInput: { audioStreamEnd: true } });
  }

  /** Drops the rest of the model turn in progress (the API has no cancel; see the file comment). */
  cancelResponse(): void {
    this.#socket.assertReady();
    this.#turns.cancel();
  }

  /** No truncate in the Live API: the server keeps what it generated (declared `truncate: false`). */
  truncate(itemId: string, audioEndMs: number): void {
    if (!Number.isFinite(audioEndMs) || audioEndMs < 0)
      throw new TalkError(
        "invalid_params",
        `audioEndMs must be a finite non-negative number, got ${audioEndMs}.`,
      );
    this.#socket.assertReady();
    this.#log.debug(
      { itemId, audioEndMs },
      "gemini live: no truncate in the API; history keeps the whole turn",
    );
  }

  /**
   * Answers a function call (`toolResponse`). The response must be an object:
   * a JSON object output is sent as is, anything else as `{output}`. The model
   * always continues after it; `respond: false` cannot hold it back.
   */
  submitToolResult(callId: string, output: string): void {
    if (this.#cancelledCalls.delete(callId)) {
      // The service cancelled the call (the caller spoke over it): it expects no response any more.
      this.#log.debug({ callId }, "gemini live: result of a call the server cancelled dropped");
      return;
    }
    const name = this.#turns.callNames.get(callId);
    if (name === undefined)
      throw new TalkError("tool_not_found", `Gemini Live made no function call ${callId} in this session.`);
    this.#turns.callNames.delete(callId);
    this.#send({
      toolResponse: { functionResponses: [{ id: callId, name, response: responseObject(output) }] },
    });
  }

  /** A turn of text (Gateway-built instructions, or nothing: the end of the current turn). */
  createResponse(instructions?: string): void {
    this.#send({
      clientContent: {
        ...(instructions === undefined ? {} : { turns: [{ role: "user", parts: [{ text: instructions }] }] }),
        turnComplete: true,
      },
    });
  }

  /** Speaks a verbatim line (a greeting, a farewell): content of a user turn asking for it read aloud. */
  speakText(text: string): void {
    this.#send({
      clientContent: {
        turns: [
          {
            role: "user",
            parts: [{ text: `Read this aloud exactly as written, adding nothing:\n\n${text}` }],
          },
        ],
        turnComplete: true,
      },
    });
  }

  sendText(text: string): void {
    this.#send({
      clientContent: { turns: [{ role: "user", parts: [{ text }] }], turnComplete: true },
    });
  }

  close(): Promise<void> {
    this.#input.close();
    return this.#socket.close("closed");
  }

  /** Every message but the audio itself: held caller audio goes first (an audioStreamEnd must follow it). */
  #send(message: Json): void {
    this.#input.flush();
    this.#socket.send(message);
  }

  #message(message: Json): void {
    if (message.goAway !== undefined) {
      // The server will end the connection soon; its close is reported as connection_lost.
      this.#log.warn(
        { goAway: message.goAway },
        "gemini live: the server announced the end of the connection",
      );
    }
    if (message.toolCallCancellation !== undefined) this.#callsCancelled(message.toolCallCancellation);
    for (const event of this.#turns.map(message)) {
      if (event.type === "error")
        this.#log.warn({ code: event.code, message: event.message }, "gemini live: bad message");
      this.#emit(event);
    }
  }

  /**
   * `toolCallCancellation {ids}`: calls the server no longer wants answered
   * (it sends this when the caller interrupts a turn with calls pending). A
   * result the Gateway still submits for one is dropped, not sent: the tool
   * may have finished before the cancellation arrived. Bounded: ids of calls
   * never answered are forgotten oldest first.
   */
  #callsCancelled(cancellation: unknown): void {
    const ids = (cancellation as { ids?: unknown } | null)?.ids;
    if (!Array.isArray(ids)) {
      this.#emit({
        type: "error",
        code: "invalid_provider_event",
        message: "toolCallCancellation without ids",
        fatal: false,
      });
      return;
    }
    for (const id of ids) {
      if (typeof id !== "string" || !this.#turns.callNames.delete(id)) continue;
      this.#cancelledCalls.add(id);
      if (this.#cancelledCalls.size > CANCELLED_CALL_MEMORY)
        this.#cancelledCalls.delete(this.#cancelledCalls.values().next().value!);
    }
    this.#log.info({ ids }, "gemini live: function calls cancelled by the server");
  }

  #emit(event: RealtimeProviderEvent): void {
    try {
      this.#onEvent(event);
    } catch (err) {
      this.#log.error({ err: String(err), event: event.type }, "gemini live: event listener threw");
    }
  }
}

function responseObject(output: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(output);
    if (typeof value === "object" && value !== null && !Array.isArray(value))
      return value as Record<string, unknown>;
  } catch {
    // Not JSON: sent as text.
  }
  return { output };
}
