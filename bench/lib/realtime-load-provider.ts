/**
 * A multi-connection stand-in for the OpenAI Realtime API, for load: it
 * speaks just enough of the GA protocol for a relay (session.update ->
 * session.updated, input_audio_buffer.append, response.created +
 * response.output_audio.delta, input_audio_buffer.speech_started,
 * response.cancel -> response.done) on as many sockets as the relay opens.
 *
 * Audio carries stamps (see frame-stamp.ts): appends are timed on arrival
 * (frame in -> provider), deltas are stamped when sent (provider -> frame
 * out is timed by the Twilio side). Messages are read with string searches,
 * not JSON.parse, so the generator stays cheap at thousands of frames/s.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocket, WebSocketServer } from "ws";
import { FRAME_BASE64_CHARS, LatencyLog, readStamp, readStamps, stampedFramesBase64 } from "./frame-stamp.js";

export interface ProviderConnection {
  readonly ws: WebSocket;
  /** The call this socket relays, learnt from the first stamped append. */
  callIdx: number;
  responseId: string | undefined;
  itemId: string | undefined;
  seq: number;
  ready: boolean;
  /** speech_started was sent and the relay's response.cancel has not arrived yet. */
  interrupted: boolean;
}

export class RealtimeLoadProvider {
  readonly connections: ProviderConnection[] = [];
  readonly byCall = new Map<number, ProviderConnection>();
  /** frame in -> provider, ms, appends stamped inside the measuring window. */
  readonly inbound: LatencyLog;
  /** Deltas sent inside the window (the Twilio side times their arrival). */
  readonly outbound: LatencyLog;
  /** When speech_started was sent, by call (barge-in -> clear). */
  readonly speechAt = new Map<number, number>();
  /**
   * How long each frame waited in the relay for the rest of its append (0 for a relay that sends every
   * frame on its own), ms; windowed with `inbound`.
   */
  readonly inputHold = new LatencyLog();
  /** Stamped appends received, by call (loss accounting). */
  received = 0;
  cancels = 0;
  /**
   * Deltas sent after speech_started and before the relay's response.cancel arrived: audio of an answer the
   * relay has already interrupted, which it must drop, so they are not counted as sent (a relay that passed
   * them on would show more frames arriving than sent).
   */
  discarded = 0;
  readonly #http: Server = createServer();
  readonly #wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  #responses = 0;
  #onReady: Array<() => void> = [];

  constructor(inbound: LatencyLog, outbound: LatencyLog) {
    this.inbound = inbound;
    this.outbound = outbound;
    this.#http.on("upgrade", (req, socket, head) =>
      this.#wss.handleUpgrade(req, socket, head, (ws) => this.#accept(ws)),
    );
  }

  async listen(port = 0): Promise<number> {
    await new Promise<void>((resolve) => this.#http.listen(port, "127.0.0.1", resolve));
    return (this.#http.address() as AddressInfo).port;
  }

  get readyCount(): number {
    let n = 0;
    for (const c of this.connections) if (c.ready && c.ws.readyState === WebSocket.OPEN) n++;
    return n;
  }

  /** Resolves once `n` sockets are configured (session.updated sent). */
  async whenReady(n: number): Promise<void> {
    while (this.readyCount < n) await new Promise<void>((r) => this.#onReady.push(r));
  }

  /** Starts an assistant answer on the socket (response.created), if none is active. */
  startResponse(c: ProviderConnection): void {
    if (c.responseId) return;
    c.interrupted = false;
    c.responseId = `resp_${++this.#responses}`;
    c.itemId = `item_${this.#responses}`;
    send(c.ws, `{"type":"response.created","response":{"id":"${c.responseId}","status":"in_progress"}}`);
    send(
      c.ws,
      `{"type":"response.output_item.added","response_id":"${c.responseId}","item":{"id":"${c.itemId}","type":"message","role":"assistant"}}`,
    );
  }

  /** One u-law delta of `frames` x 20 ms of the active answer, every frame stamped now. */
  sendDelta(c: ProviderConnection, frames = 1): boolean {
    if (!c.responseId || c.ws.readyState !== WebSocket.OPEN) return false;
    const now = performance.now();
    if (c.interrupted) this.discarded += frames;
    else for (let i = 0; i < frames; i++) this.outbound.countSent(now);
    const delta = stampedFramesBase64(c.callIdx, c.seq + 1, frames, now);
    c.seq += frames;
    send(
      c.ws,
      `{"type":"response.output_audio.delta","response_id":"${c.responseId}","item_id":"${c.itemId}","output_index":0,"content_index":0,"delta":"${delta}"}`,
    );
    return true;
  }

  /** The answer is complete: its audio item and the response end (the relay then waits for playback to finish). */
  endResponse(c: ProviderConnection): void {
    if (!c.responseId) return;
    send(
      c.ws,
      `{"type":"response.output_audio.done","response_id":"${c.responseId}","item_id":"${c.itemId}","output_index":0,"content_index":0}`,
    );
    send(
      c.ws,
      `{"type":"response.done","response":{"id":"${c.responseId}","status":"completed","output":[]}}`,
    );
    c.responseId = undefined;
  }

  /** The caller started speaking over the answer (server VAD): the relay should clear and cancel. */
  speechStarted(c: ProviderConnection): void {
    this.speechAt.set(c.callIdx, performance.now());
    if (c.responseId) c.interrupted = true;
    send(c.ws, `{"type":"input_audio_buffer.speech_started","audio_start_ms":0,"item_id":"user_${c.seq}"}`);
  }

  /** The caller stopped: the relay ends the user turn, so the next answer has a turn of its own. */
  speechStopped(c: ProviderConnection): void {
    send(c.ws, `{"type":"input_audio_buffer.speech_stopped","audio_end_ms":0,"item_id":"user_${c.seq}"}`);
  }

  async close(): Promise<void> {
    for (const c of this.connections) c.ws.terminate();
    await new Promise<void>((resolve) => this.#http.close(() => resolve()));
  }

  #accept(ws: WebSocket): void {
    const c: ProviderConnection = {
      ws,
      callIdx: -1,
      responseId: undefined,
      itemId: undefined,
      seq: 0,
      ready: false,
      interrupted: false,
    };
    this.connections.push(c);
    send(ws, `{"type":"session.created","session":{"type":"realtime"}}`);
    ws.on("error", () => {});
    ws.on("message", (data) => {
      const text = String(data);
      if (
        text.startsWith('{"type":"input_audio_buffer.append"') ||
        text.includes('"input_audio_buffer.append"')
      ) {
        const at = text.indexOf('"audio":"');
        if (at < 0) return;
        const end = text.indexOf('"', at + 9);
        // A relay may send several 20 ms frames in one append (talk.input.providerAppendMs).
        const stamps =
          end - (at + 9) <= FRAME_BASE64_CHARS
            ? [readStamp(text, at + 9)].filter((x) => x !== undefined)
            : readStamps(text, at + 9, end);
        const newest = stamps.at(-1);
        if (!newest) return;
        if (c.callIdx < 0) {
          c.callIdx = newest.callIdx;
          this.byCall.set(newest.callIdx, c);
        }
        const now = performance.now();
        for (const stamp of stamps) {
          this.received++;
          // The relay's latency is the piece's: from its newest frame. How long the older frames were held
          // for the piece is the relay's chosen batching, recorded apart.
          const held = newest.sentAt - stamp.sentAt;
          this.inbound.record(stamp.sentAt, now - held);
          this.inputHold.record(stamp.sentAt, stamp.sentAt + held);
        }
        return;
      }
      if (text.includes('"session.update"')) {
        // Echo the formats the relay asked for (audio/pcmu both ways for a phone call).
        const session = (JSON.parse(text) as { session?: unknown }).session ?? {};
        send(ws, JSON.stringify({ type: "session.updated", session }));
        c.ready = true;
        for (const r of this.#onReady.splice(0)) r();
        return;
      }
      if (text.includes('"response.cancel"')) {
        this.cancels++;
        if (c.responseId)
          send(ws, `{"type":"response.done","response":{"id":"${c.responseId}","status":"cancelled"}}`);
        c.responseId = undefined;
        c.interrupted = false;
      }
      // conversation.item.truncate and the rest need no answer for the relay to go on.
    });
  }
}

function send(ws: WebSocket, text: string): void {
  if (ws.readyState === WebSocket.OPEN) ws.send(text);
}
