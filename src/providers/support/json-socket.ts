/**
 * A provider WebSocket carrying one JSON object per frame, as the realtime
 * voice APIs use: connect with headers, send the configuration first, wait
 * until the server confirms it, then hand every object to the owner. One
 * idempotent close; a socket the server or the network ends is reported once
 * (`onLost`), and `onFinished` runs once however the socket ended.
 *
 * Failures while connecting reject `open()` with a TalkError: `cancelled`
 * (the signal), `timeout`, `provider_unavailable` (handshake refused, with
 * `details.status`; closed during setup, with the server's close reason),
 * or whatever the owner's `setup` callback returns (a refused configuration).
 */
import WebSocket from "ws";
import { cancelledError, TalkError } from "../../core/index.js";
import type { TalkLogger } from "../../core/index.js";

export type Json = Record<string, unknown>;

export interface JsonSocketOptions {
  url: string;
  headers: Record<string, string>;
  /** The provider's name in errors and logs. */
  label: string;
  /** Handshake plus confirmation of the configuration, ms. */
  connectTimeoutMs: number;
  /** How long close() waits for the close handshake before dropping the socket, ms. */
  closeTimeoutMs: number;
  /** Largest server frame accepted, bytes. */
  maxPayloadBytes: number;
  /** Server frames may be binary frames holding JSON text (some APIs send JSON that way). */
  binaryJson: boolean;
  signal: AbortSignal;
  logger: TalkLogger;
}

export interface JsonSocketHandlers {
  /** During setup: "ready" when the configuration is confirmed, a TalkError when it is refused, else undefined. */
  setup(message: Json): "ready" | TalkError | undefined;
  /** Runs synchronously when setup completes, before any later frame is handled. */
  onReady(): void;
  /** Every object after setup. */
  onMessage(message: Json): void;
  /** A frame that is not a JSON object (after setup, or during it). */
  onInvalidFrame(): void;
  /** The server or the network ended the socket after setup. */
  onLost(code: number, reason: string): void;
  /** Once, however the socket ended after setup (our close included). */
  onFinished(reason: string): void;
}

type State = "connecting" | "ready" | "closing" | "closed";

export class JsonSocket {
  readonly #o: JsonSocketOptions;
  readonly #h: JsonSocketHandlers;
  #ws: WebSocket | undefined;
  #state: State = "connecting";
  #closing: Promise<void> | undefined;
  #onAbort = (): void => void this.close("aborted");

  constructor(options: JsonSocketOptions, handlers: JsonSocketHandlers) {
    this.#o = options;
    this.#h = handlers;
  }

  get state(): State {
    return this.#state;
  }

  /** Connects, sends `first`, resolves once the owner's setup callback says "ready". */
  open(first: Json): Promise<void> {
    const { signal, label } = this.#o;
    if (signal.aborted) return Promise.reject(cancelledError(signal));
    const ws = new WebSocket(this.#o.url, {
      headers: this.#o.headers,
      maxPayload: this.#o.maxPayloadBytes,
      handshakeTimeout: this.#o.connectTimeoutMs,
      // Never offered: every 20 ms audio frame (base64, barely compressible) would pay zlib both ways.
      perMessageDeflate: false,
    });
    this.#ws = ws;
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const fail = (err: TalkError): void => {
        if (settled) return;
        settled = true;
        cleanup();
        ws.removeAllListeners("message");
        ws.on("error", () => {}); // errors while tearing down are expected
        ws.terminate();
        this.#state = "closed";
        reject(err);
      };
      const onAbort = (): void => fail(cancelledError(signal));
      const timer = setTimeout(
        () =>
          fail(
            new TalkError("timeout", `${label} did not become ready within ${this.#o.connectTimeoutMs} ms.`),
          ),
        this.#o.connectTimeoutMs,
      );
      const cleanup = (): void => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
      };
      signal.addEventListener("abort", onAbort, { once: true });

      ws.on("open", () => ws.send(JSON.stringify(first)));
      ws.on("error", (err: Error) => {
        const status = /Unexpected server response: (\d+)/.exec(err.message)?.[1];
        if (!settled) {
          fail(
            new TalkError("provider_unavailable", `${label} connection failed: ${err.message}`, {
              cause: err,
              ...(status ? { details: { status: Number(status) } } : {}),
            }),
          );
          return;
        }
        this.#o.logger.warn({ err: err.message, provider: label }, "realtime: socket error");
      });
      ws.on("close", (code: number, reason: Buffer) => {
        const why = reason.toString("utf8");
        if (!settled) {
          fail(
            new TalkError(
              "provider_unavailable",
              `${label} closed the connection during setup (${code}${why ? `: ${why.slice(0, 300)}` : ""}).`,
              { details: { closeCode: code } },
            ),
          );
          return;
        }
        this.#socketClosed(code, why);
      });
      ws.on("message", (data: WebSocket.RawData, isBinary: boolean) => {
        if (isBinary && !this.#o.binaryJson) return;
        const message = parseJsonObject(data);
        if (message === undefined) {
          this.#h.onInvalidFrame();
          return;
        }
        if (settled) {
          this.#h.onMessage(message);
          return;
        }
        const verdict = this.#h.setup(message);
        if (verdict instanceof TalkError) {
          fail(verdict);
        } else if (verdict === "ready") {
          settled = true;
          cleanup();
          this.#state = "ready";
          signal.addEventListener("abort", this.#onAbort, { once: true });
          this.#h.onReady();
          resolve();
        }
      });
    });
  }

  /** invalid_state unless the socket is ready (an owner refusing a call at once, before anything is sent). */
  assertReady(): void {
    if (this.#state !== "ready")
      throw new TalkError("invalid_state", `The realtime session is ${this.#state}.`);
  }

  /** Sends one object; invalid_state unless ready. */
  send(message: Json): void {
    this.assertReady();
    this.#ws!.send(JSON.stringify(message));
  }

  /** Sends a message the owner already serialized as JSON text; invalid_state unless ready. */
  sendText(json: string): void {
    this.assertReady();
    this.#ws!.send(json);
  }

  close(reason: string): Promise<void> {
    if (this.#closing !== undefined) return this.#closing;
    this.#o.signal.removeEventListener("abort", this.#onAbort);
    const ws = this.#ws;
    if (this.#state === "closed" || ws === undefined) {
      this.#state = "closed";
      this.#closing = Promise.resolve();
      return this.#closing;
    }
    this.#state = "closing";
    this.#closing = new Promise<void>((resolve) => {
      const timer = setTimeout(() => ws.terminate(), this.#o.closeTimeoutMs);
      ws.once("close", () => {
        clearTimeout(timer);
        resolve();
      });
      if (ws.readyState === WebSocket.CLOSED) {
        clearTimeout(timer);
        resolve();
      } else {
        ws.close(1000, reason);
      }
    }).then(() => this.#finish(reason));
    return this.#closing;
  }

  #socketClosed(code: number, reason: string): void {
    if (this.#state === "closing" || this.#state === "closed") return;
    // The provider or the network ended the session; the owner must end the call or reconnect.
    this.#o.signal.removeEventListener("abort", this.#onAbort);
    this.#closing = Promise.resolve();
    this.#h.onLost(code, reason);
    this.#finish(`socket closed (${code})`);
  }

  #finish(reason: string): void {
    if (this.#state === "closed") return;
    this.#state = "closed";
    this.#h.onFinished(reason);
  }
}

/** The frame as a JSON object, or undefined when it is not one. */
export function parseJsonObject(data: WebSocket.RawData): Json | undefined {
  try {
    const text = Array.isArray(data)
      ? Buffer.concat(data).toString("utf8")
      : Buffer.from(data as ArrayBuffer).toString("utf8");
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
  } catch {
    return undefined;
  }
}
