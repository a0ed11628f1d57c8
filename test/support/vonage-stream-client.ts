/**
 * A local stand-in of Vonage's media server on a Voice API WebSocket,
 * written from Vonage's WebSocket guide: it connects to the NCCO's `uri`,
 * sends `{"event":"websocket:connected","content-type":"audio/l16;rate=16000",
 * ...headers}` (the NCCO endpoint's headers flattened), streams caller audio
 * as binary 640-byte frames (20 ms of 16-bit LE PCM at 16 kHz), sends
 * `websocket:dtmf`, and takes what the server sends: binary audio frames
 * (each must be 640 bytes), `{"action":"notify","payload"}` (answered with
 * `{"event":"websocket:notify","payload"}` once the audio before it has
 * played) and `{"action":"clear"}` (drops the unplayed audio, answered by
 * `websocket:cleared`). Like Vonage it buffers at most 3,072 frames: frames
 * beyond are dropped and counted in `overflowFrames`.
 *
 * Playback is "immediate" (audio counts as played on arrival), "manual" (the
 * test calls play(ms)), or "realtime" (1x, by timer). Vonage sends no stop:
 * `hangUp()` closes the socket with 1000, as Vonage does when the call ends.
 *
 * Test-only; not part of the product.
 */
import { readFileSync } from "node:fs";
import { WebSocket } from "ws";

export const FRAME_BYTES = 640;
export const BYTES_PER_MS = 32;
/** Vonage's playback buffer, frames. */
export const VONAGE_BUFFER_FRAMES = 3072;

export interface VonageStreamClientOptions {
  /** ws:// URL (the NCCO endpoint's uri). */
  url: string;
  /** The NCCO endpoint's headers (token, callId, ...). */
  headers: Record<string, unknown>;
  contentType?: string;
  playback?: "immediate" | "manual" | "realtime";
}

type Queued = { kind: "audio"; ms: number } | { kind: "notify"; payload: unknown };
type Json = Record<string, unknown>;

export class VonageStreamClient {
  /** Text messages received, parsed. */
  readonly received: Json[] = [];
  /** Binary frames received, in order. */
  readonly frames: Uint8Array[] = [];
  readonly notifiesReceived: unknown[] = [];
  readonly notifiesEchoed: unknown[] = [];
  clears = 0;
  playedMs = 0;
  overflowFrames = 0;
  /** Largest number of frames buffered at once. */
  peakBufferedFrames = 0;
  closeCode: number | undefined;
  closeReason = "";
  readonly #o: VonageStreamClientOptions;
  #ws: WebSocket | undefined;
  #queue: Queued[] = [];
  #bufferedFrames = 0;
  #timer: NodeJS.Timeout | undefined;
  #waiters: Array<() => void> = [];
  #closed: Promise<void> | undefined;

  constructor(options: VonageStreamClientOptions) {
    this.#o = options;
  }

  get headers(): Record<string, unknown> {
    return { ...this.#o.headers };
  }

  /** Audio received, ms. */
  get receivedAudioMs(): number {
    return this.frames.reduce((n, f) => n + f.byteLength, 0) / BYTES_PER_MS;
  }

  /** Opens the socket and sends websocket:connected. */
  async connect(): Promise<void> {
    const ws = new WebSocket(this.#o.url);
    this.#ws = ws;
    this.#closed = new Promise((resolve) =>
      ws.once("close", (code, reason) => {
        this.closeCode = code;
        this.closeReason = reason.toString();
        clearInterval(this.#timer);
        this.#wake();
        resolve();
      }),
    );
    ws.on("message", (data, isBinary) => this.#onMessage(data as Buffer, isBinary));
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    this.sendText({
      event: "websocket:connected",
      "content-type": this.#o.contentType ?? "audio/l16;rate=16000",
      ...this.#o.headers,
    });
    if (this.#o.playback === "realtime") this.#timer = setInterval(() => this.play(20), 20);
  }

  sendText(message: unknown): void {
    this.#ws?.send(typeof message === "string" ? message : JSON.stringify(message));
  }

  sendBinary(bytes: Uint8Array): void {
    this.#ws?.send(bytes, { binary: true });
  }

  /** Caller audio (PCM16 16 kHz) as 640-byte frames; "fast" as fast as the socket takes them, "realtime" every 20 ms. */
  async sendAudio(pcm: Uint8Array, options: { pace?: "fast" | "realtime" } = {}): Promise<void> {
    for (let at = 0; at < pcm.byteLength; at += FRAME_BYTES) {
      const frame = new Uint8Array(FRAME_BYTES);
      frame.set(pcm.subarray(at, Math.min(at + FRAME_BYTES, pcm.byteLength)));
      this.sendBinary(frame);
      if (options.pace === "realtime") await new Promise((r) => setTimeout(r, 20));
      else if (at % (FRAME_BYTES * 50) === 0) await new Promise((r) => setImmediate(r));
    }
  }

  sendDtmf(digit: string): void {
    this.sendText({ event: "websocket:dtmf", digit, duration: 260 });
  }

  /** Plays `ms` of buffered audio, answering the notifies it reaches. */
  play(ms: number): void {
    let left = ms;
    while (this.#queue.length > 0) {
      const head = this.#queue[0]!;
      if (head.kind === "notify") {
        this.#queue.shift();
        this.#echo(head.payload);
        continue;
      }
      if (left <= 0) break;
      const n = Math.min(left, head.ms);
      head.ms -= n;
      left -= n;
      this.playedMs += n;
      if (head.ms <= 0) {
        this.#queue.shift();
        this.#bufferedFrames--;
      }
    }
    this.#wake();
  }

  /** Vonage ends the call: the socket closes normally, no stop message. */
  async hangUp(): Promise<void> {
    this.#ws?.close(1000, "call ended");
    await this.#closed;
  }

  /** The connection is lost without a close handshake (a network failure, not the end of the call). */
  terminate(): void {
    this.#ws?.terminate();
  }

  /** Resolves when `predicate` holds (checked on every message). */
  async waitFor(predicate: () => boolean, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error("VonageStreamClient.waitFor timed out");
      await new Promise<void>((resolve) => {
        this.#waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }

  async waitClosed(): Promise<void> {
    await this.#closed;
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    if (this.#ws && this.#ws.readyState === WebSocket.OPEN) this.#ws.close(1000);
    await this.#closed;
  }

  #onMessage(data: Buffer, isBinary: boolean): void {
    if (isBinary) {
      const frame = new Uint8Array(data);
      this.frames.push(frame);
      if (this.#bufferedFrames >= VONAGE_BUFFER_FRAMES) this.overflowFrames++;
      else {
        this.#bufferedFrames++;
        this.peakBufferedFrames = Math.max(this.peakBufferedFrames, this.#bufferedFrames);
        this.#queue.push({ kind: "audio", ms: frame.byteLength / BYTES_PER_MS });
      }
      if (this.#o.playback === undefined || this.#o.playback === "immediate") this.play(Infinity);
    } else {
      const msg = JSON.parse(data.toString("utf8")) as Json;
      this.received.push(msg);
      if (msg["action"] === "notify") {
        this.notifiesReceived.push(msg["payload"]);
        this.#queue.push({ kind: "notify", payload: msg["payload"] });
        if (this.#o.playback === undefined || this.#o.playback === "immediate") this.play(Infinity);
        else this.play(0);
      } else if (msg["action"] === "clear") {
        this.clears++;
        this.#queue = this.#queue.filter((q) => q.kind === "notify");
        this.#bufferedFrames = 0;
        this.sendText({ event: "websocket:cleared" });
        // Notifies of the dropped audio are reached at once: nothing is left before them.
        this.play(0);
      }
    }
    this.#wake();
  }

  #echo(payload: unknown): void {
    this.notifiesEchoed.push(payload);
    this.sendText({ event: "websocket:notify", payload });
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }
}

/** pocketsphinx-testdata's goforward.raw is already 16 kHz 16-bit LE mono: Vonage's line format as is. */
export function loadSpeechPcm16k(path = "/usr/share/pocketsphinx/test/data/goforward.raw"): Uint8Array {
  const raw = readFileSync(path);
  return new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength - (raw.byteLength % 2));
}
