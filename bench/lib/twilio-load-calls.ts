/**
 * The Twilio side of many calls at once, for load: each call posts the voice
 * webhook, opens the stream from the TwiML with its token, and then sends
 * stamped 20 ms `media` frames at 50 frames/s while timing the stamped
 * frames the relay sends back (provider -> frame out), echoing marks like
 * Twilio and timing `clear` (barge-in). Calls are spread evenly over the
 * 20 ms frame period, as independent phone calls are, so the load is steady
 * rather than 1,000 frames in one instant.
 */
import { randomBytes } from "node:crypto";
import { WebSocket } from "ws";
import { LatencyLog, readStamp, stampedFrameBase64 } from "./frame-stamp.js";
import { RealtimeLoadProvider } from "./realtime-load-provider.js";

const SLOTS = 10; // 2 ms each

export interface LoadCall {
  readonly idx: number;
  readonly ws: WebSocket;
  readonly streamSid: string;
  seq: number;
  clears: number;
}

export interface TelephonyLoadOptions {
  /** The target's voice webhook, e.g. http://127.0.0.1:8787/telephony/twilio/voice?mode=realtime. */
  webhookUrl: string;
  /** Port the stand-in realtime provider listens on (the target is configured to reach it there). */
  providerPort: number;
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
    for (const c of this.calls) this.provider.startResponse(this.provider.byCall.get(c.idx)!);
  }

  /** Audio both ways at 50 frames/s per call. */
  flow(twilio: boolean, provider: boolean): void {
    this.#sending = { twilio, provider };
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
        if (p) this.provider.sendDelta(p);
      }
    }
  }

  async #dial(idx: number): Promise<void> {
    const callSid = `CA${randomBytes(16).toString("hex")}`;
    const accountSid = `AC${"0".repeat(32)}`;
    const res = await fetch(this.#o.webhookUrl, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        CallSid: callSid,
        AccountSid: accountSid,
        From: "+15550100001",
        To: "+15550100002",
        Direction: "inbound",
      }),
    });
    const twiml = await res.text();
    if (res.status !== 200) throw new Error(`webhook answered ${res.status}: ${twiml.slice(0, 200)}`);
    const url = /<Stream[^>]*\surl="([^"]+)"/.exec(twiml)?.[1]?.replace(/&amp;/g, "&");
    if (!url) throw new Error("no <Stream url> in the TwiML");
    const parameters = Object.fromEntries(
      [...twiml.matchAll(/<Parameter name="([^"]+)" value="([^"]*)"\s*\/>/g)].map((m) => [m[1]!, m[2]!]),
    );
    const ws = new WebSocket(url, { perMessageDeflate: false });
    const streamSid = `MZ${randomBytes(16).toString("hex")}`;
    const call: LoadCall = { idx, ws, streamSid, seq: 0, clears: 0 };
    await new Promise<void>((resolve, reject) => {
      ws.once("open", resolve);
      ws.once("error", reject);
    });
    ws.on("error", () => {});
    ws.on("close", () => this.#closedCalls++);
    ws.on("message", (data) => this.#onMessage(call, String(data)));
    ws.send(JSON.stringify({ event: "connected", protocol: "Call", version: "1.0.0" }));
    ws.send(
      JSON.stringify({
        event: "start",
        sequenceNumber: "1",
        start: {
          accountSid,
          streamSid,
          callSid,
          tracks: ["inbound"],
          mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1 },
          customParameters: parameters,
        },
        streamSid,
      }),
    );
    this.calls.push(call);
    this.#slots[idx % SLOTS]!.push(call);
  }

  #onMessage(call: LoadCall, text: string): void {
    if (text.startsWith('{"event":"media"')) {
      const at = text.indexOf('"payload":"');
      const stamp = at >= 0 ? readStamp(text, at + 11) : undefined;
      if (stamp) this.outbound.record(stamp.sentAt);
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
