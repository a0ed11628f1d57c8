/**
 * The Twilio side of one Media Stream, for `talkgate call`: it connects to
 * the stream URL of a TwiML `<Connect><Stream>`, sends `connected` and
 * `start` (with the TwiML's `<Parameter>`s), streams the caller's u-law audio
 * as 20 ms `media` frames at 1x, and plays what it receives the way Twilio
 * does: audio plays at 1x, a `mark` is echoed once the audio before it has
 * played, `clear` drops what has not played and echoes the pending marks.
 * What played is kept, in order: it is the assistant's side of the call.
 */
import { randomBytes } from "node:crypto";
import { WebSocket } from "ws";
import { CarrierMessageBuilder } from "../telephony/index.js";
import { CarrierPlayback, ULAW_BYTES_PER_MS } from "../telephony/index.js";

export interface SimulatedTwilioStreamOptions {
  /** ws(s):// URL from `<Stream url>`. */
  url: string;
  callSid: string;
  accountSid: string;
  customParameters: Record<string, string>;
}

export class SimulatedTwilioStream {
  readonly streamSid = `MZ${randomBytes(16).toString("hex")}`;
  /** Assistant audio that played (u-law 8 kHz), in order. */
  readonly played: Uint8Array[] = [];
  clears = 0;
  closeCode: number | undefined;
  closeReason = "";
  readonly #o: SimulatedTwilioStreamOptions;
  readonly #messages: CarrierMessageBuilder;
  readonly #playback: CarrierPlayback;
  #ws: WebSocket | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closed: Promise<void> = Promise.resolve();

  constructor(options: SimulatedTwilioStreamOptions) {
    this.#o = options;
    this.#messages = new CarrierMessageBuilder({
      streamSid: this.streamSid,
      callSid: options.callSid,
      accountSid: options.accountSid,
    });
    this.#playback = new CarrierPlayback({
      echo: (name) => this.#send(this.#messages.mark(name)),
      played: (audio) => this.played.push(audio),
    });
  }

  /** True while received audio waits to be played. */
  get playing(): boolean {
    return this.#playback.playing;
  }

  get open(): boolean {
    return this.#ws?.readyState === WebSocket.OPEN;
  }

  async connect(): Promise<void> {
    const ws = new WebSocket(this.#o.url);
    this.#ws = ws;
    this.#closed = new Promise((resolve) =>
      ws.on("close", (code, reason) => {
        this.closeCode = code;
        this.closeReason = reason.toString();
        clearInterval(this.#timer);
        resolve();
      }),
    );
    ws.on("message", (data) => this.#onMessage(String(data)));
    await new Promise<void>((resolve, reject) => {
      ws.once("open", resolve);
      ws.once("error", reject);
    });
    ws.on("error", () => {});
    this.#send(this.#messages.connected());
    this.#send(this.#messages.start(this.#o.customParameters));
    let last = performance.now();
    this.#timer = setInterval(() => {
      const now = performance.now();
      this.#playback.play(Math.round((now - last) * ULAW_BYTES_PER_MS));
      last = now;
    }, 20);
  }

  /** Sends one 20 ms frame (160 bytes of u-law). */
  sendFrame(frame: Uint8Array): void {
    this.#send(this.#messages.media(frame));
  }

  /** The caller hung up: `stop`, then the socket closes. */
  async stop(): Promise<void> {
    this.#send(this.#messages.stop());
    this.#ws?.close(1000);
    await this.#closed;
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    if (this.#ws && this.#ws.readyState !== WebSocket.CLOSED) this.#ws.close(1000);
    await this.#closed;
  }

  #send(message: Record<string, unknown>): void {
    if (this.#ws?.readyState === WebSocket.OPEN) this.#ws.send(JSON.stringify(message));
  }

  #onMessage(text: string): void {
    let msg: Record<string, unknown>;
    try {
      msg = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return;
    }
    if (msg["event"] === "media") {
      const payload = String((msg["media"] as Record<string, unknown> | undefined)?.["payload"] ?? "");
      this.#playback.audio(new Uint8Array(Buffer.from(payload, "base64")));
    } else if (msg["event"] === "mark") {
      this.#playback.mark(String((msg["mark"] as Record<string, unknown> | undefined)?.["name"] ?? ""));
    } else if (msg["event"] === "clear") {
      this.clears++;
      this.#playback.clear();
    }
  }
}
