/**
 * A local Twilio Media Streams client: what Twilio does on a bidirectional
 * <Connect><Stream>, following the documented message shapes. It connects to
 * a stream URL, sends `connected` and `start` (customParameters carrying the
 * stream token), streams caller audio as 20 ms u-law `media` frames (in real
 * time or as fast as the socket takes them), sends `dtmf` and `stop`, and
 * records the `media`, `mark` and `clear` it receives.
 *
 * It also "plays" what it receives, to echo marks the way Twilio does
 * (CarrierPlayback, shared with the `talkgate call` demo): a mark is echoed
 * once the audio sent before it has played; `clear` drops the unplayed audio
 * and echoes every pending mark at once. Playback is
 * "immediate" (audio counts as played on arrival), "manual" (the test calls
 * play(ms), deterministic), or "realtime" (1x, by timer).
 *
 * Test-only; not part of the product.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { statSync } from "node:fs";
import { WebSocket } from "ws";
import { CarrierMessageBuilder } from "../../src/telephony/twilio/carrier-messages.js";
import { CarrierPlayback, ULAW_BYTES_PER_MS } from "../../src/telephony/twilio/carrier-playback.js";
import { bytesOnce } from "./bytes-once.js";
import { PredicateWaiters } from "./predicate-waiters.js";

export interface TwilioStreamClientOptions {
  /** ws:// URL of the stream endpoint (as in the TwiML <Stream url>). */
  url: string;
  /** start.customParameters, e.g. { token, callSid, from, to } from the TwiML <Parameter>s. */
  customParameters?: Record<string, string>;
  streamSid?: string;
  callSid?: string;
  accountSid?: string;
  /** How received audio is "played" to echo marks. Default "immediate". */
  playback?: "immediate" | "manual" | "realtime";
}

type Json = Record<string, unknown>;

function sid(prefix: string): string {
  return prefix + randomBytes(16).toString("hex");
}

export class TwilioStreamClient {
  readonly streamSid: string;
  readonly callSid: string;
  readonly accountSid: string;
  /** Everything received, parsed. */
  readonly received: Json[] = [];
  /** Audio received in `media` messages, in order. */
  readonly media: Uint8Array[] = [];
  /** Names of marks received, and of those echoed back. */
  readonly marksReceived: string[] = [];
  readonly marksEchoed: string[] = [];
  clears = 0;
  playedMs = 0;
  /** The audio played so far, in order (what the caller heard), and where each clear fell in it (bytes). */
  readonly played: Uint8Array[] = [];
  readonly clearedAtBytes: number[] = [];
  /**
   * Realtime playback only: what the caller's loudspeaker gave out, on the line's clock: the audio
   * played, and u-law silence where the buffer ran dry (before the answer, between sentences, after
   * a clear). An echo path reads this rather than `played`: a real echo comes back a fixed delay
   * after the loudspeaker, gaps included, where `played` alone would close every gap up.
   */
  readonly line: Uint8Array[] = [];
  /** Line time emitted so far (bytes) and when the line's clock started. */
  #lineBytes = 0;
  #lineStartedAt = 0;
  /** A speakerphone advances the line in step with the caller's frames (driveLine): the timer then leaves it. */
  #lineDriven = false;
  /** performance.now() when each `clear` arrived (turn-taking latencies). */
  readonly clearedAt: number[] = [];
  /** Close code when the server closed the socket. */
  closeCode: number | undefined;
  closeReason = "";
  readonly #options: TwilioStreamClientOptions;
  #ws: WebSocket | undefined;
  readonly #messages: CarrierMessageBuilder;
  readonly #playback = new CarrierPlayback({
    echo: (name) => this.#echo(name),
    played: (audio) => this.played.push(audio.slice()),
  });
  #timer: NodeJS.Timeout | undefined;
  readonly #waiters = new PredicateWaiters();
  #closed: Promise<void> | undefined;

  constructor(options: TwilioStreamClientOptions) {
    this.#options = options;
    this.streamSid = options.streamSid ?? sid("MZ");
    this.callSid = options.callSid ?? sid("CA");
    this.accountSid = options.accountSid ?? sid("AC");
    this.#messages = new CarrierMessageBuilder({
      streamSid: this.streamSid,
      callSid: this.callSid,
      accountSid: this.accountSid,
    });
  }

  /** The start.customParameters this client presents (replayed by reused-token tests). */
  get customParameters(): Record<string, string> {
    return { ...(this.#options.customParameters ?? {}) };
  }

  /** Audio received, ms (u-law 8 kHz: 8 bytes per ms). */
  get receivedAudioMs(): number {
    return this.media.reduce((n, m) => n + m.byteLength, 0) / 8;
  }

  /** Opens the socket and sends `connected` then `start`, as Twilio does. */
  async connect(): Promise<void> {
    const ws = new WebSocket(this.#options.url);
    this.#ws = ws;
    this.#closed = new Promise((resolve) =>
      ws.on("close", (code, reason) => {
        this.closeCode = code;
        this.closeReason = reason.toString();
        if (this.#timer) clearInterval(this.#timer);
        this.#waiters.notify();
        resolve();
      }),
    );
    ws.on("message", (data) => this.#onMessage(String(data)));
    await new Promise<void>((resolve, reject) => {
      ws.once("open", resolve);
      ws.once("error", reject);
    });
    ws.on("error", () => {});
    this.sendJson(this.#messages.connected());
    this.sendJson(this.#messages.start(this.#options.customParameters ?? {}));
    if (this.#options.playback === "realtime") {
      this.#lineStartedAt = performance.now();
      this.#timer = setInterval(() => {
        if (!this.#lineDriven) this.#catchUp();
      }, 20);
    }
  }

  /** Streams u-law audio as 20 ms `media` frames; "realtime" paces them at 1x. */
  async sendAudio(
    ulaw: Uint8Array,
    options: { pace?: "realtime" | "fast"; signal?: AbortSignal } = {},
  ): Promise<void> {
    const started = performance.now();
    for (let at = 0, n = 0; at < ulaw.length; at += 160, n++) {
      options.signal?.throwIfAborted();
      if (this.#ws?.readyState !== WebSocket.OPEN) return;
      const frame = ulaw.subarray(at, Math.min(ulaw.length, at + 160));
      this.sendJson(this.#messages.media(frame));
      if (options.pace === "realtime") {
        const due = started + (n + 1) * 20;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      } else if (n % 50 === 49) {
        await new Promise((r) => setImmediate(r)); // let the socket and the server breathe
      }
    }
  }

  /** Sends one `media` frame now (a caller loop that paces itself). */
  sendMedia(frame: Uint8Array): void {
    this.sendJson(this.#messages.media(frame));
  }

  sendDtmf(digit: string): void {
    this.sendJson(this.#messages.dtmf(digit));
  }

  /** Sends `stop` (the caller hung up) and waits for the socket to close. */
  async stop(): Promise<void> {
    this.sendJson(this.#messages.stop());
    this.#ws?.close(1000);
    await this.#closed;
  }

  sendJson(message: Json): void {
    this.sendRaw(JSON.stringify(message));
  }

  /** Sends any text frame (malformed-frame tests). */
  sendRaw(text: string): void {
    if (this.#ws?.readyState === WebSocket.OPEN) this.#ws.send(text);
  }

  /** Plays `ms` of received audio (manual playback), echoing the marks it passes; idle time is not banked. */
  play(ms: number): void {
    this.playedMs += this.#playback.play(Math.round(ms * ULAW_BYTES_PER_MS)) / ULAW_BYTES_PER_MS;
  }

  /** Resolves when `predicate` holds (checked after every received message and on close). */
  waitFor(predicate: () => boolean): Promise<void> {
    return this.#waiters.wait(predicate);
  }

  async close(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    if (this.#ws && this.#ws.readyState !== WebSocket.CLOSED) this.#ws.close(1000);
    await this.#closed;
  }

  #onMessage(text: string): void {
    let msg: Json;
    try {
      msg = JSON.parse(text) as Json;
    } catch {
      return;
    }
    this.received.push(msg);
    if (msg.event === "media") {
      const payload = String((msg.media as Json | undefined)?.payload ?? "");
      const audio = new Uint8Array(Buffer.from(payload, "base64"));
      this.media.push(audio);
      this.#playback.audio(audio);
      if (this.#options.playback === undefined || this.#options.playback === "immediate")
        this.play(audio.byteLength / ULAW_BYTES_PER_MS);
    } else if (msg.event === "mark") {
      const name = String((msg.mark as Json | undefined)?.name ?? "");
      this.marksReceived.push(name);
      this.#playback.mark(name);
    } else if (msg.event === "clear") {
      this.clears++;
      this.clearedAt.push(performance.now());
      if (this.#options.playback === "realtime") this.#catchUp();
      this.clearedAtBytes.push(this.played.reduce((n, a) => n + a.byteLength, 0));
      this.#playback.clear(); // Twilio drops the buffered audio and echoes every pending mark
    }
    this.#waiters.notify();
  }

  /** Realtime playback: performance.now() when the line's clock started (`line`'s byte n plays n / 8 ms after). */
  get lineStartedAt(): number {
    return this.#lineStartedAt;
  }

  /** True when received audio plays at 1x by timer (`line` is kept). */
  get realtime(): boolean {
    return this.#options.playback === "realtime";
  }

  /**
   * Realtime playback, driven by the caller's side (a speakerphone): from now on the line plays only
   * when advanceLine() says (and when a clear lands), so the marks it echoes go out in order with the
   * caller's frames captured before them, as a phone's one clock sends them; `false` hands the line
   * back to the timer.
   */
  driveLine(driven = true): void {
    this.#lineDriven = driven;
  }

  /** Realtime playback: plays the line up to `until` (performance.now() time; never beyond now). */
  advanceLine(until: number): void {
    if (this.#options.playback === "realtime") this.#catchUp(Math.min(until, performance.now()));
  }

  /**
   * Realtime playback: plays the line time passed since the last tick (also right before a clear
   * lands), counted from the line's start so rounding never accumulates, and records it on `line`.
   */
  #catchUp(until = performance.now()): void {
    const due = Math.round((until - this.#lineStartedAt) * ULAW_BYTES_PER_MS) - this.#lineBytes;
    if (due <= 0) return;
    this.#lineBytes += due;
    const from = this.played.length;
    const played = this.#playback.play(due);
    this.playedMs += played / ULAW_BYTES_PER_MS;
    for (let i = from; i < this.played.length; i++) this.line.push(this.played[i]!);
    if (played < due) this.line.push(new Uint8Array(due - played).fill(0xff)); // u-law silence
  }

  #echo(name: string): void {
    this.marksEchoed.push(name);
    this.sendJson(this.#messages.mark(name));
  }
}

/** A file's conversion, made once per process and version of the file (one written again is converted again). */
function convertOnce(kind: string, path: string, convert: () => Buffer): Uint8Array {
  const { size, mtimeMs } = statSync(path);
  return bytesOnce(`${kind}\n${path}\n${size}\n${mtimeMs}`, () => new Uint8Array(convert()));
}

/** A recording (WAV or any ffmpeg input) as u-law 8 kHz mono, converted by ffmpeg at test time. */
export function loadRecordingUlaw(path: string): Uint8Array {
  return convertOnce("any", path, () =>
    execFileSync("ffmpeg", ["-v", "error", "-i", path, "-ac", "1", "-ar", "8000", "-f", "mulaw", "pipe:1"]),
  );
}

/** Real speech from Debian's pocketsphinx-testdata. */
export const SPEECH_RECORDINGS = {
  goforward: "/usr/share/pocketsphinx/test/data/goforward.raw",
  cards1: "/usr/share/pocketsphinx/test/data/cards/001.wav",
  austen: "/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0870.wav",
} as const;

/** A pocketsphinx-testdata recording (raw files are 16 kHz s16le) as u-law 8 kHz. */
export function loadSpeechUlaw(path: string): Uint8Array {
  if (!path.endsWith(".raw")) return loadRecordingUlaw(path);
  return convertOnce("raw", path, () =>
    execFileSync("ffmpeg", [
      "-v",
      "error",
      "-f",
      "s16le",
      "-ar",
      "16000",
      "-ac",
      "1",
      "-i",
      path,
      "-ar",
      "8000",
      "-f",
      "mulaw",
      "pipe:1",
    ]),
  );
}
