/**
 * A local Plivo Audio Streams client: what Plivo does for a bidirectional
 * `<Stream>`, following Plivo's "Stream Event Protocol" page. It opens the
 * stream URL with a V3-signed upgrade (X-Plivo-Signature-V3 over the URL,
 * GET), sends `start` (callId, streamId, mediaFormat u-law 8000, and the
 * answer's extraHeaders as `extra_headers`, `;`-separated), streams caller
 * audio as 20 ms `media` frames and `dtmf`, and at the end simply closes the
 * socket (there is no `stop`).
 *
 * It "plays" what it receives: `playAudio` audio is buffered and played in
 * order at 1x; a `checkpoint` is answered with `playedStream` once the audio
 * before it has played; `clearAudio` drops the unplayed audio together with
 * the checkpoints still pending (Plivo answers only checkpoints whose audio
 * played) and is answered with `clearedAudio`. Playback is "immediate"
 * (played on arrival), "manual" (the test calls play(ms)) or "realtime".
 *
 * Test-only; not part of the product.
 */
import { randomUUID } from "node:crypto";
import { WebSocket } from "ws";
import { computePlivoSignature } from "../../src/telephony/plivo/plivo-signature.js";
import { PredicateWaiters } from "./predicate-waiters.js";

export interface PlivoStreamClientOptions {
  /** ws:// URL the server listens on (the XML's URL points at the public name). */
  url: string;
  /** The URL Plivo signs for the upgrade (the public https form of the stream URL). */
  signedUrl: string;
  /** Auth token to sign the upgrade with; null: no signature headers. */
  authToken: string | null;
  /** The answer's extraHeaders (`a=1,b=2`), handed back in `extra_headers`. */
  extraHeaders: string;
  callId?: string;
  accountId?: string;
  /** Default audio/x-mulaw 8000. */
  mediaFormat?: { encoding: string; sampleRate: number };
  playback?: "immediate" | "manual" | "realtime";
}

type Json = Record<string, unknown>;
type Queued = { kind: "audio"; data: Uint8Array; offset: number } | { kind: "checkpoint"; name: string };

export class PlivoStreamClient {
  readonly callId: string;
  readonly streamId = randomUUID();
  readonly received: Json[] = [];
  readonly media: Uint8Array[] = [];
  readonly checkpointsReceived: string[] = [];
  readonly checkpointsPlayed: string[] = [];
  clears = 0;
  playedMs = 0;
  closeCode: number | undefined;
  closeReason = "";
  readonly #o: PlivoStreamClientOptions;
  #ws: WebSocket | undefined;
  #queue: Queued[] = [];
  #seq = 0;
  #chunk = 0;
  #timer: NodeJS.Timeout | undefined;
  readonly #waiters = new PredicateWaiters();
  #closed: Promise<void> | undefined;

  constructor(options: PlivoStreamClientOptions) {
    // Plivo's <Stream extraHeaders>: "Max length: 512 bytes. Only characters [A-Z], [a-z], [0-9] allowed"
    // (docs.plivo.com/docs/voice/xml/audiostream), pairs as `name=value` separated by `,`.
    const bytes = Buffer.byteLength(options.extraHeaders);
    if (bytes > 512) throw new Error(`Plivo refuses extraHeaders of ${bytes} bytes (at most 512)`);
    if (
      options.extraHeaders !== "" &&
      !/^[A-Za-z0-9]+=[A-Za-z0-9]+(?:,[A-Za-z0-9]+=[A-Za-z0-9]+)*$/.test(options.extraHeaders)
    )
      throw new Error(`Plivo refuses extraHeaders other than letters and digits: ${options.extraHeaders}`);
    this.#o = options;
    this.callId = options.callId ?? randomUUID();
  }

  get receivedAudioMs(): number {
    return this.media.reduce((n, m) => n + m.byteLength, 0) / 8;
  }

  /** `extra_headers` as the start frame carries them. */
  get extraHeaders(): string {
    return this.#o.extraHeaders.split(",").join(";");
  }

  /** Opens the socket (signed upgrade) and sends `start`. */
  async connect(): Promise<void> {
    const nonce = String(Math.floor(Math.random() * 1e20));
    const headers: Record<string, string> =
      this.#o.authToken === null
        ? {}
        : {
            "X-Plivo-Signature-V3": computePlivoSignature(this.#o.authToken, nonce, "GET", this.#o.signedUrl),
            "X-Plivo-Signature-V3-Nonce": nonce,
          };
    const ws = new WebSocket(this.#o.url, { headers });
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
    this.sendJson({
      event: "start",
      sequenceNumber: ++this.#seq,
      start: {
        callId: this.callId,
        streamId: this.streamId,
        accountId: this.#o.accountId ?? "MAXXXXXXXXXXXXXXXXXX",
        tracks: ["inbound"],
        mediaFormat: this.#o.mediaFormat ?? { encoding: "audio/x-mulaw", sampleRate: 8000 },
      },
      extra_headers: this.extraHeaders,
    });
    if (this.#o.playback === "realtime") {
      let last = performance.now();
      this.#timer = setInterval(() => {
        const now = performance.now();
        this.play(now - last);
        last = now;
      }, 20);
    }
  }

  /** Streams u-law audio as 20 ms `media` frames. */
  async sendAudio(ulaw: Uint8Array, options: { pace?: "realtime" | "fast" } = {}): Promise<void> {
    const started = performance.now();
    for (let at = 0, n = 0; at < ulaw.length; at += 160, n++) {
      if (this.#ws?.readyState !== WebSocket.OPEN) return;
      const frame = ulaw.subarray(at, Math.min(ulaw.length, at + 160));
      this.sendJson({
        event: "media",
        sequenceNumber: ++this.#seq,
        streamId: this.streamId,
        media: {
          track: "inbound",
          timestamp: String(Date.now()),
          chunk: ++this.#chunk,
          payload: Buffer.from(frame).toString("base64"),
        },
        extra_headers: this.extraHeaders,
      });
      if (options.pace === "realtime") {
        const wait = started + (n + 1) * 20 - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      } else if (n % 50 === 49) await new Promise((r) => setImmediate(r));
    }
  }

  sendDtmf(digit: string): void {
    this.sendJson({
      event: "dtmf",
      sequenceNumber: ++this.#seq,
      streamId: this.streamId,
      dtmf: { track: "inbound", digit, timestamp: String(Date.now()) },
      extra_headers: this.extraHeaders,
    });
  }

  /** The caller hung up: Plivo closes the stream (no `stop`). */
  async hangUp(): Promise<void> {
    this.#ws?.close(1000);
    await this.#closed;
  }

  /** The TCP connection drops without a close frame (1006 on our side). */
  async drop(): Promise<void> {
    this.#ws?.terminate();
    await this.#closed;
  }

  sendJson(message: Json): void {
    this.sendRaw(JSON.stringify(message));
  }

  sendRaw(text: string): void {
    if (this.#ws?.readyState === WebSocket.OPEN) this.#ws.send(text);
  }

  /** Plays `ms` of buffered audio, answering the checkpoints it passes; idle time is not banked. */
  play(ms: number): void {
    let credit = Math.max(0, Math.floor(ms * 8));
    let played = 0;
    while (this.#queue.length > 0) {
      const head = this.#queue[0]!;
      if (head.kind === "checkpoint") {
        this.#queue.shift();
        this.checkpointsPlayed.push(head.name);
        this.sendJson({
          event: "playedStream",
          sequenceNumber: ++this.#seq,
          streamId: this.streamId,
          name: head.name,
        });
        continue;
      }
      const n = Math.min(credit, head.data.byteLength - head.offset);
      if (n <= 0) break;
      head.offset += n;
      credit -= n;
      played += n;
      if (head.offset < head.data.byteLength) break;
      this.#queue.shift();
    }
    this.playedMs += played / 8;
  }

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
    if (msg.event === "playAudio") {
      const m = (msg.media ?? {}) as Json;
      // Plivo plays only what it was told the format of: u-law 8 kHz here.
      if (m.contentType === "audio/x-mulaw" && m.sampleRate === 8000) {
        const audio = new Uint8Array(Buffer.from(String(m.payload ?? ""), "base64"));
        this.media.push(audio);
        if (audio.byteLength > 0) this.#queue.push({ kind: "audio", data: audio, offset: 0 });
        if (this.#o.playback === undefined || this.#o.playback === "immediate")
          this.play(audio.byteLength / 8);
      }
    } else if (msg.event === "checkpoint" && msg.streamId === this.streamId) {
      const name = String(msg.name ?? "");
      this.checkpointsReceived.push(name);
      this.#queue.push({ kind: "checkpoint", name });
      this.play(0);
    } else if (msg.event === "clearAudio" && msg.streamId === this.streamId) {
      this.clears++;
      this.#queue = []; // buffered audio and pending checkpoints are gone: no playedStream for them
      this.sendJson({ event: "clearedAudio", sequenceNumber: ++this.#seq, streamId: this.streamId });
    }
    this.#waiters.notify();
  }
}
