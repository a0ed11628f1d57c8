import { TalkError } from "../core/index.js";
import type { TalkEvent } from "../core/index.js";
import type { EventFrame, GatewayEventName, ResponseFrame } from "../gateway/index.js";
import type {
  PlaybackPosition,
  TalkAudioPayload,
  TalkMethod,
  TalkModeState,
  TalkParams,
  TalkResult,
} from "../gateway/index.js";
import { openSocket } from "./node-socket.js";
import { fromWire } from "./wire-errors.js";
import type { WireSocket } from "./wire-socket.js";

export { fromWire };

export interface TalkClientOptions {
  /** Bearer token (sent as `Authorization: Bearer <token>`). */
  token?: string;
  /** Default time a request may take before it rejects with `timeout`, ms. Default 30 000; 0 disables. */
  requestTimeoutMs?: number;
  /** Largest frame the client accepts, bytes. Default 64 MiB (talk.speak answers can be large). */
  maxPayloadBytes?: number;
}

export interface RequestOptions {
  timeoutMs?: number;
  /** Aborting rejects the pending request locally (the server finishes or abandons it on its own). */
  signal?: AbortSignal;
}

export interface TalkClientEvents {
  "talk.event": (event: TalkEvent, seq: number | undefined) => void;
  "talk.audio": (audio: TalkAudioPayload) => void;
  "talk.mode": (mode: TalkModeState) => void;
  /** Any other event frame (e.g. the console's `admin.session.event`), by name. */
  event: (name: string, payload: unknown) => void;
  /** A response the client could not match to a request (e.g. to a malformed frame). */
  unmatched: (frame: ResponseFrame) => void;
  close: (info: { code: number; reason: string }) => void;
}

/** What each event frame the server pushes carries. */
interface ServerEventPayloads {
  "talk.event": TalkEvent;
  "talk.audio": TalkAudioPayload;
  "talk.mode": TalkModeState;
}

/** An event frame, discriminated by `event` so its payload needs no cast. */
type ServerEventFrame = {
  [E in GatewayEventName]: EventFrame<ServerEventPayloads[E]> & { event: E };
}[GatewayEventName];

/** Params are optional exactly when the method has no required params. */
type ParamsArg<M extends TalkMethod> =
  Record<never, never> extends TalkParams<M> ? [params?: TalkParams<M>] : [params: TalkParams<M>];

/** The verbs that carry a session's playback position (`playback`). */
const PLAYBACK_VERBS: ReadonlySet<string> = new Set([
  "talk.session.appendAudio",
  "talk.session.startTurn",
  "talk.session.cancelOutput",
  "talk.session.cancelTurn",
]);

/** The verbs that stop an answer: they carry the position even when it was sent before. */
const STOPPING_VERBS: ReadonlySet<string> = new Set([
  "talk.session.startTurn",
  "talk.session.cancelOutput",
  "talk.session.cancelTurn",
]);

interface Pending {
  resolve(value: unknown): void;
  reject(err: TalkError): void;
  cleanup(): void;
}

/**
 * A typed client of the Talk API (`/talk`). One request → one promise; events
 * reach listeners registered with `on()`. Closing (either side) rejects every
 * pending request with a coded TalkError.
 */
export class TalkClient {
  readonly #socket: WireSocket;
  readonly #timeoutMs: number;
  readonly #pending = new Map<string, Pending>();
  readonly #listeners = new Map<keyof TalkClientEvents, Set<(...args: never[]) => void>>();
  readonly #closed: Promise<void>;
  #nextId = 1;
  /** Per session: the app's last playback report, and whether a verb has carried it yet. */
  readonly #playback = new Map<string, { position: PlaybackPosition; sent: boolean }>();
  #closeInfo: { code: number; reason: string } | undefined;

  private constructor(socket: WireSocket, options: TalkClientOptions) {
    this.#socket = socket;
    this.#timeoutMs = options.requestTimeoutMs ?? 30_000;
    socket.onMessage((text) => this.#onFrame(text));
    this.#closed = new Promise((resolve) =>
      socket.onClose((code, reason) => {
        this.#onClose(code, reason);
        resolve();
      }),
    );
  }

  /**
   * Opens a connection. Rejects with `unauthorized` (401), `shutting_down` / `rate_limited` (503) or
   * `provider_unavailable` (network). In Node the socket is `ws`; the browser build opens the page's own.
   */
  static async connect(url: string, options: TalkClientOptions = {}): Promise<TalkClient> {
    const socket = await openSocket(url, {
      ...(options.token !== undefined ? { token: options.token } : {}),
      ...(options.maxPayloadBytes !== undefined ? { maxPayloadBytes: options.maxPayloadBytes } : {}),
    });
    return new TalkClient(socket, options);
  }

  get closed(): boolean {
    return this.#closeInfo !== undefined || !this.#socket.open;
  }

  /** Sends a request and resolves with its typed result, or rejects with the server's coded error. */
  request<M extends TalkMethod>(
    method: M,
    ...args: [...ParamsArg<M>, RequestOptions?]
  ): Promise<TalkResult<M>> {
    const [params, options] = args as unknown as [TalkParams<M> | undefined, RequestOptions | undefined];
    return this.#send(method, this.#withPlayback(method, params), options) as Promise<TalkResult<M>>;
  }

  /**
   * The app reports what its speaker has played of a Gateway session's
   * assistant audio: of the `talk.audio` item `itemId`, `playedMs` from that
   * item's first sample (what was played out, not what was received). The
   * client sends it with the session's next verb that carries `playback`
   * (appendAudio when it is new; startTurn, cancelOutput and cancelTurn
   * always), unless that request names its own. The Gateway truncates a
   * cancelled answer there, so the model knows what the user heard.
   */
  reportPlayback(sessionId: string, position: PlaybackPosition): void {
    this.#playback.set(sessionId, { position: { ...position }, sent: false });
  }

  /** Forgets a session's playback reports (the session closed). */
  forgetPlayback(sessionId: string): void {
    this.#playback.delete(sessionId);
  }

  /**
   * Sends a request by name, untyped: for methods newer than this client.
   * Unknown names are answered by the server with `unknown_method`.
   */
  requestUntyped(method: string, params?: unknown, options?: RequestOptions): Promise<unknown> {
    return this.#send(method, params, options);
  }

  on<E extends keyof TalkClientEvents>(event: E, listener: TalkClientEvents[E]): () => void {
    let set = this.#listeners.get(event);
    if (!set) this.#listeners.set(event, (set = new Set()));
    set.add(listener as (...args: never[]) => void);
    return () => set.delete(listener as (...args: never[]) => void);
  }

  /** Closes the connection; pending requests reject with `cancelled`. Resolves once closed. */
  close(code = 1000, reason = "client closing"): Promise<void> {
    if (this.#closeInfo === undefined) this.#socket.close(code, reason);
    return this.#closed;
  }

  /** `params` with the session's reported playback position, on the verbs that carry one. */
  #withPlayback(method: string, params: unknown): unknown {
    if (!PLAYBACK_VERBS.has(method) || typeof params !== "object" || params === null) return params;
    const p = params as { sessionId?: unknown; playback?: unknown };
    if (p.playback !== undefined || typeof p.sessionId !== "string") return params;
    const report = this.#playback.get(p.sessionId);
    if (!report || (report.sent && !STOPPING_VERBS.has(method))) return params;
    report.sent = true;
    return { ...p, playback: report.position };
  }

  #send(method: string, params: unknown, options: RequestOptions = {}): Promise<unknown> {
    if (this.closed) {
      return Promise.reject(
        new TalkError("cancelled", "The connection is closed.", { details: { ...this.#closeInfo } }),
      );
    }
    const id = String(this.#nextId++);
    return new Promise((resolve, reject) => {
      const timeoutMs = options.timeoutMs ?? this.#timeoutMs;
      const timer =
        timeoutMs > 0
          ? setTimeout(
              () => fail(new TalkError("timeout", `${method} got no answer within ${timeoutMs} ms.`)),
              timeoutMs,
            )
          : undefined;
      const onAbort = (): void => fail(new TalkError("cancelled", `${method} was aborted by the caller.`));
      const cleanup = (): void => {
        clearTimeout(timer);
        options.signal?.removeEventListener("abort", onAbort);
        this.#pending.delete(id);
      };
      const fail = (err: TalkError): void => {
        cleanup();
        reject(err);
      };
      if (options.signal?.aborted) return onAbort();
      options.signal?.addEventListener("abort", onAbort, { once: true });
      this.#pending.set(id, { resolve, reject, cleanup });
      this.#socket.send(
        JSON.stringify({ type: "req", id, method, ...(params !== undefined ? { params } : {}) }),
        (err) =>
          fail(new TalkError("cancelled", `${method} could not be sent: ${err.message}`, { cause: err })),
      );
    });
  }

  #onFrame(text: string): void {
    let frame: ResponseFrame | ServerEventFrame;
    try {
      // The server's frames, as the protocol defines them (frames.ts, talk-methods.ts).
      frame = JSON.parse(text) as ResponseFrame | ServerEventFrame;
    } catch {
      return;
    }
    if (frame.type === "res") {
      const pending = frame.id === null ? undefined : this.#pending.get(frame.id);
      if (!pending) {
        this.#emit("unmatched", frame);
        return;
      }
      pending.cleanup();
      if (frame.ok) pending.resolve(frame.payload);
      else pending.reject(fromWire(frame.error));
      return;
    }
    if (frame.type === "event") {
      if (frame.event === "talk.event") {
        if (frame.payload.type === "session.closed") this.#playback.delete(frame.payload.sessionId);
        this.#emit("talk.event", frame.payload, frame.seq);
      } else if (frame.event === "talk.audio") this.#emit("talk.audio", frame.payload);
      else if (frame.event === "talk.mode") this.#emit("talk.mode", frame.payload);
      else this.#emit("event", (frame as EventFrame).event, (frame as EventFrame).payload);
    }
  }

  #emit<E extends keyof TalkClientEvents>(event: E, ...args: Parameters<TalkClientEvents[E]>): void {
    for (const listener of this.#listeners.get(event) ?? []) {
      try {
        (listener as unknown as (...a: Parameters<TalkClientEvents[E]>) => void)(...args);
      } catch {
        // A listener that throws must not break delivery to the others or the socket.
      }
    }
  }

  #onClose(code: number, reason: string): void {
    this.#closeInfo = { code, reason };
    for (const pending of [...this.#pending.values()]) {
      pending.cleanup();
      pending.reject(
        new TalkError("cancelled", `The connection closed (${code}${reason ? ` ${reason}` : ""}).`, {
          details: { closeCode: code, closeReason: reason },
        }),
      );
    }
    this.#emit("close", { code, reason });
  }
}
