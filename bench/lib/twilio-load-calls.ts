/**
 * The Twilio side of many calls at once, for load: each call posts the voice
 * webhook, opens the stream from the TwiML with its token, and then sends
 * stamped 20 ms `media` frames at 50 frames/s while timing the stamped
 * frames the relay sends back (provider -> frame out), echoing marks like
 * Twilio and timing `clear` (barge-in). Calls are spread evenly over the
 * 20 ms frame period, as independent phone calls are, so the load is steady
 * rather than 1,000 frames in one instant.
 */
import { answerInboundCall, startTwilioStream } from "./twilio-stream-start.js";
import { randomBytes } from "node:crypto";
import { WebSocket } from "ws";
import { FRAME_BASE64_CHARS, LatencyLog, readStamp, readStamps, stampedFrameBase64 } from "./frame-stamp.js";
import { RealtimeLoadProvider, type ProviderConnection } from "./realtime-load-provider.js";

const SLOTS = 10; // 2 ms each

export interface LoadCall {
  readonly idx: number;
  readonly ws: WebSocket;
  readonly streamSid: string;
  seq: number;
  clears: number;
  /** 20 ms ticks of this call since it was placed (the realistic shape's conversation clock). */
  ticks: number;
}

/**
 * How the provider side talks. `worst`: a 20 ms delta every 20 ms, all the time (one message per frame both
 * ways). `realistic`: a conversation, the assistant answering half of each 4 s cycle in deltas of `deltaFrames`
 * x 20 ms (sent as they fall due, so at 1x on average), the caller talking the other half (server VAD's
 * speech_started / speech_stopped, each answer a response of its own that ends). Twilio sends the caller's
 * 20 ms frames all the time in both (silence is audio on a phone line).
 */
export type LoadShape = { kind: "worst" } | { kind: "realistic"; deltaFrames: number };

/** The realistic shape's cycle, 20 ms ticks: the assistant answers in the first half, the caller talks in the second. */
const CYCLE_TICKS = 200;
const ANSWER_TICKS = 100;
/** The caller starts talking this long after the answer ended (the relay's playback confirmation comes first). */
const TURN_GAP_TICKS = 10;

export interface TelephonyLoadOptions {
  /** The target's voice webhook, e.g. http://127.0.0.1:8787/telephony/twilio/voice?mode=realtime. */
  webhookUrl: string;
  /** Port the stand-in realtime provider listens on (the target is configured to reach it there). */
  providerPort: number;
  /** Default worst. */
  shape?: LoadShape;
  /**
   * The URL the call's stream connects to, from the TwiML's `<Stream url>` (default: as given). For a relay whose
   * TwiML names a TLS front (wss://) that a real deployment puts before it, the bench target maps it to the relay.
   */
  streamUrl?: (twimlUrl: string) => string;
  /** Logs to time the frames in (default: one LatencyLog each; the soak passes windowed ones). */
  inbound?: LatencyLog;
  outbound?: LatencyLog;
}

export class TelephonyLoad {
  readonly inbound: LatencyLog;
  readonly outbound: LatencyLog;
  /** provider speech_started -> clear at the Twilio side, ms. */
  readonly bargeIn: number[] = [];
  readonly provider: RealtimeLoadProvider;
  readonly calls: LoadCall[] = [];
  readonly #o: TelephonyLoadOptions;
  #slots: LoadCall[][] = Array.from({ length: SLOTS }, () => []);
  #timer: NodeJS.Timeout | undefined;
  #sending = { twilio: false, provider: false };
  #closedCalls = 0;

  constructor(options: TelephonyLoadOptions) {
    this.#o = options;
    this.inbound = options.inbound ?? new LatencyLog();
    this.outbound = options.outbound ?? new LatencyLog();
    this.provider = new RealtimeLoadProvider(this.inbound, this.outbound);
  }

  get closedCalls(): number {
    return this.#closedCalls;
  }

  async start(): Promise<void> {
    await this.provider.listen(this.#o.providerPort);
    let t0 = performance.now();
    let done = 0;
    const tick = (): void => {
      const due = Math.floor((performance.now() - t0) / 2);
      // Late by more than a frame period: skip ahead rather than burst (the lag shows in the latencies).
      if (due - done > SLOTS) done = due - SLOTS;
      for (; done < due; done++) this.#sendSlot(this.#slots[done % SLOTS]!);
      this.#timer = setTimeout(tick, 1);
    };
    t0 = performance.now();
    tick();
  }

  /** Places `n` more calls, `concurrency` at a time; resolves when their provider sessions are configured. */
  async addCalls(n: number, concurrency = 25): Promise<void> {
    const first = this.calls.length;
    let next = first;
    const worker = async (): Promise<void> => {
      while (next < first + n) await this.#dial(next++);
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    await this.provider.whenReady(this.calls.length);
    // Each provider socket learns its call from the first stamped frame; answers start once known.
    const sending = this.#sending.twilio;
    this.#sending.twilio = true;
    while (this.calls.some((c) => !this.provider.byCall.has(c.idx)))
      await new Promise((r) => setTimeout(r, 20));
    this.#sending.twilio = sending;
    // Answers start now in the worst shape; the realistic one starts them on its conversation clock.
    if ((this.#o.shape ?? { kind: "worst" }).kind === "worst")
      for (const c of this.calls) this.provider.startResponse(this.provider.byCall.get(c.idx)!);
  }

  /** Audio both ways at 50 frames/s per call. */
  flow(twilio: boolean, provider: boolean): void {
    this.#sending = { twilio, provider };
  }

  /**
   * Holds the calls idle (another relay is measured meanwhile): audio stops and every answer in progress ends
   * as a provider ends one, so the relay sees quiet calls, not a provider that stalled mid-answer (which its
   * fault handling would answer with an apology and a reconnect).
   */
  pause(): void {
    this.flow(false, false);
    for (const c of this.provider.connections) this.provider.endResponse(c);
  }

  /** Audio both ways again; answers restart where the shape has the assistant speaking. */
  resume(): void {
    const shape = this.#o.shape ?? { kind: "worst" };
    for (const call of this.calls) {
      const p = this.provider.byCall.get(call.idx);
      if (p && (shape.kind === "worst" || this.#phase(call) < ANSWER_TICKS)) this.provider.startResponse(p);
    }
    this.flow(true, true);
  }

  #phase(c: LoadCall): number {
    return (c.ticks + c.idx * 37) % CYCLE_TICKS;
  }

  async close(): Promise<void> {
    clearTimeout(this.#timer);
    for (const c of this.calls) c.ws.terminate();
    await this.provider.close();
  }

  #sendSlot(slot: LoadCall[]): void {
    const { twilio, provider } = this.#sending;
    for (const c of slot) {
      if (twilio && c.ws.readyState === WebSocket.OPEN) {
        const now = performance.now();
        this.inbound.countSent(now);
        c.seq++;
        c.ws.send(
          `{"event":"media","sequenceNumber":"${c.seq}","media":{"track":"inbound","chunk":"${c.seq}","timestamp":"${c.seq * 20}","payload":"${stampedFrameBase64(c.idx, c.seq, now)}"},"streamSid":"${c.streamSid}"}`,
        );
      }
      if (provider) {
        const p = this.provider.byCall.get(c.idx);
        if (p) this.#speak(c, p);
      }
    }
  }

  #speak(c: LoadCall, p: ProviderConnection): void {
    const shape = this.#o.shape ?? { kind: "worst" };
    if (shape.kind === "worst") {
      this.provider.sendDelta(p);
      return;
    }
    // Calls are spread over the cycle, so the answers of all calls do not start in the same tick.
    const phase = this.#phase(c);
    c.ticks++;
    if (phase === 0) {
      this.provider.speechStopped(p);
      this.provider.startResponse(p);
    } else if (phase === ANSWER_TICKS) {
      this.provider.endResponse(p);
    } else if (phase === ANSWER_TICKS + TURN_GAP_TICKS) {
      this.provider.speechStarted(p);
    }
    // A delta once its audio is due: deltaFrames x 20 ms of answer every deltaFrames ticks.
    if (phase < ANSWER_TICKS && phase % shape.deltaFrames === shape.deltaFrames - 1)
      this.provider.sendDelta(p, shape.deltaFrames);
  }

  async #dial(idx: number): Promise<void> {
    const { callSid, accountSid, url, parameters } = await answerInboundCall(this.#o.webhookUrl);
    const ws = new WebSocket(this.#o.streamUrl ? this.#o.streamUrl(url) : url, { perMessageDeflate: false });
    const streamSid = `MZ${randomBytes(16).toString("hex")}`;
    const call: LoadCall = { idx, ws, streamSid, seq: 0, clears: 0, ticks: 0 };
    await startTwilioStream(
      ws,
      { accountSid, streamSid, callSid, customParameters: parameters },
      { message: (text) => this.#onMessage(call, text), close: () => this.#closedCalls++ },
    );
    this.calls.push(call);
    this.#slots[idx % SLOTS]!.push(call);
  }

  #onMessage(call: LoadCall, text: string): void {
    if (text.startsWith('{"event":"media"')) {
      const at = text.indexOf('"payload":"');
      if (at < 0) return;
      const end = text.indexOf('"', at + 11);
      if (end - (at + 11) <= FRAME_BASE64_CHARS) {
        const stamp = readStamp(text, at + 11);
        if (stamp) this.outbound.record(stamp.sentAt);
        return;
      }
      // Several frames in one message (a relay that forwards a provider delta unsplit): each is timed.
      const now = performance.now();
      for (const stamp of readStamps(text, at + 11, end)) this.outbound.record(stamp.sentAt, now);
      return;
    }
    if (text.startsWith('{"event":"mark"')) {
      // Played at once: echo the mark as Twilio does after playing the audio before it.
      const name = /"name":"([^"]+)"/.exec(text)?.[1];
      if (name)
        call.ws.send(
          `{"event":"mark","sequenceNumber":"${++call.seq}","streamSid":"${call.streamSid}","mark":{"name":"${name}"}}`,
        );
      return;
    }
    if (text.startsWith('{"event":"clear"')) {
      call.clears++;
      const at = this.provider.speechAt.get(call.idx);
      if (at !== undefined) {
        this.bargeIn.push(performance.now() - at);
        this.provider.speechAt.delete(call.idx);
      }
    }
  }
}
