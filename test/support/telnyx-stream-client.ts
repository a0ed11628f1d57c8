/**
 * A local Telnyx media-streaming peer: what Telnyx does for a TeXML
 * `<Connect><Stream bidirectionalMode="rtp" bidirectionalCodec="PCMU">`,
 * following the documented frame shapes ("Stream call media over
 * WebSocket"). It connects to the stream URL, sends `connected` and `start`
 * (`custom_parameters` from the TeXML `<Parameter>`s, `call_control_id`,
 * `media_format` PCMU/8000/1), streams caller audio as 20 ms `media` frames
 * numbered by `chunk` and `sequence_number` (in order, or with neighbours
 * swapped, since Telnyx does not guarantee the order), sends `dtmf` and
 * `stop`, and checks what it receives: `media` (base64 RTP payload), `mark`
 * and `clear`; anything else is answered with an `error` frame, as Telnyx
 * does, and recorded.
 *
 * It "plays" the audio it receives to send marks back the way Telnyx does:
 * a mark comes back once the media before it has played (at once when none
 * is queued); `clear` drops the queued audio and sends back the queued
 * marks. Playback is "immediate", "manual" (play(ms)) or "realtime" (1x).
 *
 * Test-only; not part of the product.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { WebSocket } from "ws";
import { CarrierPlayback, ULAW_BYTES_PER_MS } from "../../src/telephony/index.js";
import { PredicateWaiters } from "./predicate-waiters.js";

export interface TelnyxStreamClientOptions {
  /** ws:// URL of the stream endpoint (as in the TeXML <Stream url>). */
  url: string;
  /** start.custom_parameters: the TeXML <Parameter>s. */
  customParameters?: Record<string, string>;
  /** start.call_control_id (a TeXML call's CallSid). */
  callControlId?: string;
  streamId?: string;
  from?: string;
  to?: string;
  /** start.media_format.encoding, whatever the TeXML asked for. Default: as Telnyx decides (below). */
  encoding?: string;
  /**
   * The answer TeXML and the call's own codec: the stream's codec is what the
   * `<Stream codec>` asks for when Telnyx can transcode to it (PCMU <-> PCMA
   * only), else the call's ("When set to 'default' or when transcoding is not
   * possible, the codec from the call will be used", the TeXML `<Stream>`
   * reference). Default call codec PCMU.
   */
  texml?: string;
  callCodec?: string;
  /** How received audio is "played" to send marks back. Default "immediate". */
  playback?: "immediate" | "manual" | "realtime";
}

type Json = Record<string, unknown>;

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A Telnyx-style call_control_id: `v3:` + base64url. */
export function telnyxCallControlId(): string {
  return `v3:${randomBytes(30).toString("base64url")}`;
}

export class TelnyxStreamClient {
  readonly streamId: string;
  readonly callControlId: string;
  readonly received: Json[] = [];
  /** Audio received in `media` frames, in order. */
  readonly media: Uint8Array[] = [];
  readonly marksReceived: string[] = [];
  readonly marksEchoed: string[] = [];
  /** Frames of ours Telnyx would refuse (answered with `error`). */
  readonly refused: string[] = [];
  clears = 0;
  playedMs = 0;
  closeCode: number | undefined;
  closeReason = "";
  readonly #options: TelnyxStreamClientOptions;
  readonly #playback = new CarrierPlayback({ echo: (name) => this.#echo(name) });
  #ws: WebSocket | undefined;
  #seq = 0;
  #chunk = 0;
  #timer: NodeJS.Timeout | undefined;
  readonly #waiters = new PredicateWaiters();
  #closed: Promise<void> | undefined;

  constructor(options: TelnyxStreamClientOptions) {
    this.#options = options;
    this.streamId = options.streamId ?? randomUUID();
    this.callControlId = options.callControlId ?? telnyxCallControlId();
  }

  get customParameters(): Record<string, string> {
    return { ...(this.#options.customParameters ?? {}) };
  }

  /** Audio received, ms (PCMU 8 kHz: 8 bytes per ms). */
  get receivedAudioMs(): number {
    return this.media.reduce((n, m) => n + m.byteLength, 0) / ULAW_BYTES_PER_MS;
  }

  /** Opens the socket and sends `connected` then `start`, as Telnyx does. */
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
    ws.on("message", (data, isBinary) => this.#onMessage(String(data), isBinary));
    await new Promise<void>((resolve, reject) => {
      ws.once("open", resolve);
      ws.once("error", reject);
    });
    ws.on("error", () => {});
    this.sendJson({ event: "connected", version: "1.0.0" });
    this.sendJson({
      event: "start",
      sequence_number: this.#next(),
      stream_id: this.streamId,
      start: {
        user_id: "3e6f995f-85f7-4705-9741-53b116d28237",
        call_control_id: this.callControlId,
        call_session_id: randomUUID(),
        from: this.#options.from ?? "+15557654321",
        to: this.#options.to ?? "+15550001111",
        client_state: null,
        custom_parameters: this.#options.customParameters ?? {},
        media_format: streamFormat(this.#options),
      },
    });
    if (this.#options.playback === "realtime") {
      let last = performance.now();
      this.#timer = setInterval(() => {
        const now = performance.now();
        this.play(now - last);
        last = now;
      }, 20);
    }
  }

  /**
   * Streams PCMU as 20 ms `media` frames. "realtime" paces them at 1x;
   * `order: "swapped"` sends each pair of neighbours in reverse order (what
   * Telnyx's unordered delivery may do), chunk numbers telling the truth.
   */
  async sendAudio(
    ulaw: Uint8Array,
    options: { pace?: "realtime" | "fast"; order?: "in-order" | "swapped" } = {},
  ): Promise<void> {
    const frames: Json[] = [];
    for (let at = 0; at < ulaw.length; at += 160) frames.push(this.mediaFrame(ulaw.subarray(at, at + 160)));
    if (options.order === "swapped")
      for (let i = 0; i + 1 < frames.length; i += 2)
        [frames[i], frames[i + 1]] = [frames[i + 1]!, frames[i]!];
    const started = performance.now();
    for (let n = 0; n < frames.length; n++) {
      if (this.#ws?.readyState !== WebSocket.OPEN) return;
      this.sendJson(frames[n]!);
      if (options.pace === "realtime") {
        const wait = started + (n + 1) * 20 - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      } else if (n % 50 === 49) {
        await new Promise((r) => setImmediate(r));
      }
    }
  }

  /** One inbound `media` frame (the next chunk), not sent. */
  mediaFrame(frame: Uint8Array): Json {
    const chunk = ++this.#chunk;
    return {
      event: "media",
      sequence_number: this.#next(),
      stream_id: this.streamId,
      media: {
        track: "inbound",
        chunk: String(chunk),
        timestamp: String(chunk * 20),
        payload: Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength).toString("base64"),
      },
    };
  }

  sendDtmf(digit: string): void {
    this.sendJson({
      event: "dtmf",
      stream_id: this.streamId,
      occurred_at: new Date().toISOString(),
      sequence_number: this.#next(),
      dtmf: { digit },
    });
  }

  /** Sends `stop` (the call ended) and waits for the socket to close. */
  async stop(): Promise<void> {
    this.sendJson({
      event: "stop",
      sequence_number: this.#next(),
      stream_id: this.streamId,
      stop: { user_id: "3e6f995f-85f7-4705-9741-53b116d28237", call_control_id: this.callControlId },
    });
    this.#ws?.close(1000);
    await this.#closed;
  }

  sendJson(message: Json): void {
    this.sendRaw(JSON.stringify(message));
  }

  /** Any text frame (malformed-frame tests). */
  sendRaw(text: string): void {
    if (this.#ws?.readyState === WebSocket.OPEN) this.#ws.send(text);
  }

  /** Plays `ms` of received audio (manual playback), sending back the marks it passes. */
  play(ms: number): void {
    this.playedMs += this.#playback.play(Math.round(ms * ULAW_BYTES_PER_MS)) / ULAW_BYTES_PER_MS;
  }

  waitFor(predicate: () => boolean): Promise<void> {
    return this.#waiters.wait(predicate);
  }

  async close(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    if (this.#ws && this.#ws.readyState !== WebSocket.CLOSED) this.#ws.close(1000);
    await this.#closed;
  }

  #onMessage(text: string, isBinary: boolean): void {
    let msg: Json | undefined;
    try {
      const value = isBinary ? undefined : (JSON.parse(text) as unknown);
      if (typeof value === "object" && value !== null && !Array.isArray(value)) msg = value as Json;
    } catch {
      // refused below
    }
    if (!msg) return this.#refuse("not a JSON frame");
    this.received.push(msg);
    if (msg["event"] === "media") {
      const payload = (msg["media"] as Json | undefined)?.["payload"];
      if (typeof payload !== "string" || payload.length === 0 || !BASE64.test(payload))
        return this.#refuse("media.payload is not base64");
      const audio = new Uint8Array(Buffer.from(payload, "base64"));
      this.media.push(audio);
      this.#playback.audio(audio);
      if (this.#options.playback === undefined || this.#options.playback === "immediate")
        this.play(audio.byteLength / ULAW_BYTES_PER_MS);
    } else if (msg["event"] === "mark") {
      const name = (msg["mark"] as Json | undefined)?.["name"];
      if (typeof name !== "string") return this.#refuse("mark.name missing");
      this.marksReceived.push(name);
      this.#playback.mark(name);
    } else if (msg["event"] === "clear") {
      this.clears++;
      this.#playback.clear();
    } else {
      return this.#refuse(`unknown event ${String(msg["event"])}`);
    }
    this.#waiters.notify();
  }

  #refuse(detail: string): void {
    this.refused.push(detail);
    this.sendJson({
      event: "error",
      sequence_number: this.#next(),
      stream_id: this.streamId,
      payload: { code: 100003, title: "malformed_frame", detail },
    });
    this.#waiters.notify();
  }

  #echo(name: string): void {
    this.marksEchoed.push(name);
    this.sendJson({ event: "mark", sequence_number: this.#next(), stream_id: this.streamId, mark: { name } });
  }

  #next(): string {
    return String(++this.#seq);
  }
}

/** The stream's media_format as Telnyx picks it from the TeXML's `codec` and the call's codec. */
function streamFormat(o: TelnyxStreamClientOptions): { encoding: string; sample_rate: number; channels: 1 } {
  const callCodec = o.callCodec ?? "PCMU";
  const asked = o.texml === undefined ? undefined : /<Stream\b[^>]*\scodec="([^"]+)"/.exec(o.texml)?.[1];
  const transcodable = ["PCMU", "PCMA"];
  const encoding =
    o.encoding ??
    (asked !== undefined &&
    asked !== "default" &&
    transcodable.includes(asked) &&
    transcodable.includes(callCodec)
      ? asked
      : callCodec);
  const rate = encoding === "PCMU" || encoding === "PCMA" ? 8000 : 16000;
  return { encoding, sample_rate: rate, channels: 1 };
}
