/**
 * A multi-connection stand-in for the OpenAI Realtime API (GA protocol:
 * session.update -> session.updated, input_audio_buffer.append,
 * response.created + response.output_audio.delta, response.cancel ->
 * response.done) that times audio by its duration rather than by stamps in
 * the payload, so it works whatever the relay does to the audio on the way
 * (u-law passed through, or L16 16 kHz resampled to 24 kHz PCM for Vonage,
 * where a stamp would not survive).
 *
 * Each socket belongs to one load call (`attach`). Caller audio: the call
 * queues the send time of every 20 ms frame; the provider adds up the audio
 * it receives (bytes / bytes per ms of the format the relay asked for in
 * session.update) and each frame counts as arrived once the audio received
 * reaches its end (less a few ms of resampler delay). Answer audio: the same
 * the other way round (see AudioClock).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocket, WebSocketServer } from "ws";
import type { LatencyLog } from "./frame-stamp.js";

/** Resampling delays the end of a frame by a few samples: a frame counts as through this much early. */
const TOLERANCE_MS = 5;
const FRAME_MS = 20;

/** Send times of 20 ms frames, matched against the audio duration received at the other end. */
export class AudioClock {
  #sent: number[] = [];
  #head = 0;
  #receivedMs = 0;
  #done = 0;

  sent(at: number): void {
    this.#sent.push(at);
  }

  /**
   * `ms` of audio arrived now: every frame whose end it reaches is recorded in `log`. A piece of several
   * frames (a relay that gathers the caller's frames, talk.input.providerAppendMs) is timed from its newest
   * frame: how long the older ones waited for it is the relay's chosen batching, not its latency.
   */
  received(ms: number, log: LatencyLog, now = performance.now()): void {
    this.#receivedMs += ms;
    const first = this.#head;
    while (this.#head < this.#sent.length && (this.#done + 1) * FRAME_MS <= this.#receivedMs + TOLERANCE_MS) {
      this.#head++;
      this.#done++;
    }
    const newest = this.#sent[this.#head - 1] ?? 0;
    for (let i = first; i < this.#head; i++) log.record(this.#sent[i]!, now - (newest - this.#sent[i]!));
    if (this.#head > 4096) {
      this.#sent = this.#sent.slice(this.#head);
      this.#head = 0;
    }
  }
}

export interface ClockConnection {
  readonly ws: WebSocket;
  ready: boolean;
  /** Audio bytes per ms of what the relay sends (input) and wants (output). */
  inBytesPerMs: number;
  outBytesPerMs: number;
  /** The call's clocks: caller audio in, answer audio out. */
  inbound: AudioClock | undefined;
  outbound: AudioClock | undefined;
  responseId: string | undefined;
  itemId: string | undefined;
  /** One 20 ms delta of the output format, base64 (silence). */
  delta: string;
}

/** Bytes per ms of an OpenAI GA audio format. */
function bytesPerMs(format: { type?: string; rate?: number } | undefined): number {
  if (format?.type === "audio/pcm") return ((format.rate ?? 24_000) / 1000) * 2;
  return 8; // audio/pcmu, audio/pcma
}

export class AudioClockProvider {
  readonly connections: ClockConnection[] = [];
  readonly #inbound: LatencyLog;
  readonly #outbound: LatencyLog;
  readonly #http: Server = createServer();
  readonly #wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  #responses = 0;
  #waiters: Array<() => void> = [];

  constructor(inbound: LatencyLog, outbound: LatencyLog) {
    this.#inbound = inbound;
    this.#outbound = outbound;
    this.#http.on("upgrade", (req, socket, head) =>
      this.#wss.handleUpgrade(req, socket, head, (ws) => this.#accept(ws)),
    );
  }

  async listen(port = 0): Promise<number> {
    await new Promise<void>((resolve) => this.#http.listen(port, "127.0.0.1", resolve));
    return (this.#http.address() as AddressInfo).port;
  }

  /** Resolves with the `n`th socket (0-based) once it is configured, or rejects after `timeoutMs`. */
  async configured(n: number, timeoutMs = 10_000): Promise<ClockConnection> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const c = this.connections[n];
      if (c?.ready) return c;
      if (performance.now() > deadline) throw new Error(`provider socket ${n} not configured in time`);
      await new Promise<void>((r) => {
        this.#waiters.push(r);
        setTimeout(r, 50);
      });
    }
  }

  /** Starts an assistant answer on the socket (response.created), if none is active. */
  startResponse(c: ClockConnection): void {
    if (c.responseId) return;
    c.responseId = `resp_${++this.#responses}`;
    c.itemId = `item_${this.#responses}`;
    send(c.ws, `{"type":"response.created","response":{"id":"${c.responseId}","status":"in_progress"}}`);
    send(
      c.ws,
      `{"type":"response.output_item.added","response_id":"${c.responseId}","item":{"id":"${c.itemId}","type":"message","role":"assistant"}}`,
    );
  }

  /** One 20 ms delta of the active answer, timed from now. */
  sendDelta(c: ClockConnection): void {
    if (!c.responseId || c.ws.readyState !== WebSocket.OPEN || !c.outbound) return;
    const now = performance.now();
    this.#outbound.countSent(now);
    c.outbound.sent(now);
    c.ws.send(
      `{"type":"response.output_audio.delta","response_id":"${c.responseId}","item_id":"${c.itemId}","output_index":0,"content_index":0,"delta":"${c.delta}"}`,
    );
  }

  async close(): Promise<void> {
    for (const c of this.connections) c.ws.terminate();
    await new Promise<void>((resolve) => this.#http.close(() => resolve()));
  }

  #accept(ws: WebSocket): void {
    const c: ClockConnection = {
      ws,
      ready: false,
      inBytesPerMs: 8,
      outBytesPerMs: 8,
      inbound: undefined,
      outbound: undefined,
      responseId: undefined,
      itemId: undefined,
      delta: "",
    };
    this.connections.push(c);
    send(ws, `{"type":"session.created","session":{"type":"realtime"}}`);
    ws.on("error", () => {});
    ws.on("message", (data) => {
      const text = String(data);
      if (text.includes('"input_audio_buffer.append"')) {
        const at = text.indexOf('"audio":"');
        if (at < 0 || !c.inbound) return;
        const end = text.indexOf('"', at + 9);
        c.inbound.received(base64Bytes(text, at + 9, end) / c.inBytesPerMs, this.#inbound);
        return;
      }
      if (text.includes('"session.update"')) {
        const session = (JSON.parse(text) as { session?: Record<string, unknown> }).session ?? {};
        const audio = session["audio"] as
          | {
              input?: { format?: { type?: string; rate?: number } };
              output?: { format?: { type?: string; rate?: number } };
            }
          | undefined;
        c.inBytesPerMs = bytesPerMs(audio?.input?.format);
        c.outBytesPerMs = bytesPerMs(audio?.output?.format);
        const silence = audio?.output?.format?.type === "audio/pcm" ? 0x00 : 0xff;
        c.delta = Buffer.alloc(c.outBytesPerMs * FRAME_MS, silence).toString("base64");
        send(ws, JSON.stringify({ type: "session.updated", session }));
        c.ready = true;
        for (const w of this.#waiters.splice(0)) w();
        return;
      }
      if (text.includes('"response.cancel"')) {
        if (c.responseId)
          send(ws, `{"type":"response.done","response":{"id":"${c.responseId}","status":"cancelled"}}`);
        c.responseId = undefined;
      }
    });
  }
}

/** Decoded length of the base64 text between `start` and `end`, without decoding it. */
export function base64Bytes(text: string, start: number, end: number): number {
  if (end <= start) return 0;
  let pad = 0;
  if (text.charCodeAt(end - 1) === 61) pad++;
  if (text.charCodeAt(end - 2) === 61) pad++;
  return ((end - start) / 4) * 3 - pad;
}

function send(ws: WebSocket, text: string): void {
  if (ws.readyState === WebSocket.OPEN) ws.send(text);
}
