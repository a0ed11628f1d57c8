/**
 * Many realtime calls at once through any of the four carriers, for load:
 * each call posts the carrier's answer webhook (unsigned: the bench server
 * runs in local demo mode, which accepts loopback webhooks), opens the
 * stream the answer document names with its parameters, then sends 20 ms
 * frames of the carrier's line format at 50 frames/s and acknowledges what
 * the relay sends back as the carrier's media server does (Twilio and
 * Telnyx mark echoes, Plivo `playedStream`, Vonage `websocket:notify`).
 * The frame builders follow the local stand-ins in test/support
 * (*-stream-client.ts), which are written from each carrier's documentation.
 *
 * Latency is timed by audio duration (AudioClock), not by stamps, because
 * Vonage's L16 16 kHz is resampled on the way. Calls are spread evenly over
 * the 20 ms frame period, as independent phone calls are.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { WebSocket } from "ws";
import { AudioClock, AudioClockProvider, base64Bytes, type ClockConnection } from "./audio-clock-provider.js";
import { LatencyLog } from "./frame-stamp.js";

export const CARRIERS = ["twilio", "telnyx", "plivo", "vonage"] as const;
export type CarrierName = (typeof CARRIERS)[number];

const SLOTS = 10; // 2 ms each
const ULAW_SILENCE = Buffer.alloc(160, 0xff).toString("base64");
const L16_SILENCE = Buffer.alloc(640);

/** One call's side of a carrier's stream. */
interface CarrierStream {
  url: string;
  /** Messages the carrier sends once the socket is open (connected / start). */
  hello: string[];
  /** The next 20 ms caller frame. */
  frame(): string | Buffer;
  /** A message from the relay: ms of line audio it carries (0 if none), and the acknowledgement to send back. */
  reply(data: Buffer, isBinary: boolean): { ms: number; answer?: string };
}

interface CarrierLine {
  webhook(base: string): { url: string; init: RequestInit; callId: string };
  stream(answer: string, callId: string): CarrierStream;
}

const form = (fields: Record<string, string>): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/x-www-form-urlencoded" },
  body: new URLSearchParams(fields),
});

/** `<Stream url="...">` and its `<Parameter>`s (TwiML / TeXML). */
function streamOf(xml: string): { url: string; parameters: Record<string, string> } {
  const url = /<Stream[^>]*\surl="([^"]+)"/.exec(xml)?.[1]?.replace(/&amp;/g, "&");
  if (!url) throw new Error(`no <Stream url> in the answer: ${xml.slice(0, 200)}`);
  const parameters = Object.fromEntries(
    [...xml.matchAll(/<Parameter name="([^"]+)" value="([^"]*)"\s*\/>/g)].map((m) => [m[1]!, m[2]!]),
  );
  return { url, parameters };
}

/** ms of u-law in the base64 `payload` of a JSON text frame. */
function payloadMs(text: string): number {
  const at = text.indexOf('"payload":"');
  if (at < 0) return 0;
  return base64Bytes(text, at + 11, text.indexOf('"', at + 11)) / 8;
}

const nameOf = (text: string): string | undefined => /"name":"([^"]+)"/.exec(text)?.[1];

const twilio: CarrierLine = {
  webhook(base) {
    const callId = `CA${randomBytes(16).toString("hex")}`;
    return {
      callId,
      url: `${base}/telephony/twilio/voice?mode=realtime`,
      init: form({
        CallSid: callId,
        AccountSid: `AC${"0".repeat(32)}`,
        From: "+15550100001",
        To: "+15550100002",
        Direction: "inbound",
      }),
    };
  },
  stream(answer, callId) {
    const { url, parameters } = streamOf(answer);
    const streamSid = `MZ${randomBytes(16).toString("hex")}`;
    let seq = 1;
    return {
      url,
      hello: [
        JSON.stringify({ event: "connected", protocol: "Call", version: "1.0.0" }),
        JSON.stringify({
          event: "start",
          sequenceNumber: "1",
          start: {
            accountSid: `AC${"0".repeat(32)}`,
            streamSid,
            callSid: callId,
            tracks: ["inbound"],
            mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1 },
            customParameters: parameters,
          },
          streamSid,
        }),
      ],
      frame: () => {
        seq++;
        return `{"event":"media","sequenceNumber":"${seq}","media":{"track":"inbound","chunk":"${seq}","timestamp":"${seq * 20}","payload":"${ULAW_SILENCE}"},"streamSid":"${streamSid}"}`;
      },
      reply(data) {
        const text = String(data);
        if (text.startsWith('{"event":"media"')) return { ms: payloadMs(text) };
        const name = text.startsWith('{"event":"mark"') ? nameOf(text) : undefined;
        return name
          ? {
              ms: 0,
              answer: `{"event":"mark","sequenceNumber":"${++seq}","streamSid":"${streamSid}","mark":{"name":"${name}"}}`,
            }
          : { ms: 0 };
      },
    };
  },
};

const telnyx: CarrierLine = {
  webhook(base) {
    const callId = `v3:${randomBytes(30).toString("base64url")}`;
    return {
      callId,
      url: `${base}/telephony/telnyx/voice?mode=realtime`,
      init: form({
        AccountSid: randomUUID(),
        CallSid: callId,
        CallSidLegacy: callId,
        CallSessionId: randomUUID(),
        From: "+15557654321",
        To: "+15550001111",
        Direction: "inbound",
        CallStatus: "ringing",
      }),
    };
  },
  stream(answer, callId) {
    const { url, parameters } = streamOf(answer);
    const streamId = randomUUID();
    let seq = 0;
    let chunk = 0;
    return {
      url,
      hello: [
        JSON.stringify({ event: "connected", version: "1.0.0" }),
        JSON.stringify({
          event: "start",
          sequence_number: String(++seq),
          stream_id: streamId,
          start: {
            call_control_id: callId,
            call_session_id: randomUUID(),
            from: "+15557654321",
            to: "+15550001111",
            client_state: null,
            custom_parameters: parameters,
            media_format: { encoding: "PCMU", sample_rate: 8000, channels: 1 },
          },
        }),
      ],
      frame: () => {
        chunk++;
        return `{"event":"media","sequence_number":"${++seq}","stream_id":"${streamId}","media":{"track":"inbound","chunk":"${chunk}","timestamp":"${chunk * 20}","payload":"${ULAW_SILENCE}"}}`;
      },
      reply(data) {
        const text = String(data);
        if (text.includes('"event":"media"')) return { ms: payloadMs(text) };
        const name = text.includes('"event":"mark"') ? nameOf(text) : undefined;
        return name
          ? {
              ms: 0,
              answer: `{"event":"mark","sequence_number":"${++seq}","stream_id":"${streamId}","mark":{"name":"${name}"}}`,
            }
          : { ms: 0 };
      },
    };
  },
};

const plivo: CarrierLine = {
  webhook(base) {
    const callId = randomUUID();
    return {
      callId,
      url: `${base}/telephony/plivo/answer?mode=realtime`,
      init: form({
        CallUUID: callId,
        From: "15557654321",
        To: "15550001111",
        Direction: "inbound",
        CallStatus: "in-progress",
      }),
    };
  },
  stream(answer, callId) {
    const m = /<Stream[^>]*\sextraHeaders="([^"]*)"[^>]*>([^<]+)<\/Stream>/.exec(answer);
    if (!m) throw new Error(`no <Stream> in the Plivo XML: ${answer.slice(0, 200)}`);
    const extraHeaders = m[1]!.split(",").join(";");
    const streamId = randomUUID();
    let seq = 0;
    let chunk = 0;
    return {
      url: m[2]!.trim(),
      hello: [
        JSON.stringify({
          event: "start",
          sequenceNumber: ++seq,
          start: {
            callId,
            streamId,
            accountId: "MAXXXXXXXXXXXXXXXXXX",
            tracks: ["inbound"],
            mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000 },
          },
          extra_headers: extraHeaders,
        }),
      ],
      frame: () => {
        chunk++;
        return `{"event":"media","sequenceNumber":${++seq},"streamId":"${streamId}","media":{"track":"inbound","timestamp":"${chunk * 20}","chunk":${chunk},"payload":"${ULAW_SILENCE}"},"extra_headers":"${extraHeaders}"}`;
      },
      reply(data) {
        const text = String(data);
        if (text.includes('"event":"playAudio"')) return { ms: payloadMs(text) };
        const name = text.includes('"event":"checkpoint"') ? nameOf(text) : undefined;
        return name
          ? {
              ms: 0,
              answer: JSON.stringify({ event: "playedStream", sequenceNumber: ++seq, streamId, name }),
            }
          : { ms: 0 };
      },
    };
  },
};

const vonage: CarrierLine = {
  webhook(base) {
    const callId = randomUUID();
    const query = new URLSearchParams({
      mode: "realtime",
      uuid: callId,
      conversation_uuid: `CON-${randomUUID()}`,
      from: "447700900123",
      to: "447700900000",
    });
    return { callId, url: `${base}/telephony/vonage/answer?${query}`, init: { method: "GET" } };
  },
  stream(answer) {
    const ncco = JSON.parse(answer) as Array<{
      action: string;
      endpoint?: Array<{ uri: string; "content-type": string; headers?: Record<string, unknown> }>;
    }>;
    const endpoint = ncco.find((a) => a.action === "connect")?.endpoint?.[0];
    if (!endpoint) throw new Error(`no connect endpoint in the NCCO: ${answer.slice(0, 200)}`);
    return {
      url: endpoint.uri,
      hello: [
        JSON.stringify({
          event: "websocket:connected",
          "content-type": endpoint["content-type"],
          ...endpoint.headers,
        }),
      ],
      frame: () => L16_SILENCE,
      reply(data, isBinary) {
        if (isBinary) return { ms: data.byteLength / 32 };
        const text = String(data);
        if (!text.includes('"notify"')) return { ms: 0 };
        const { payload } = JSON.parse(text) as { payload?: unknown };
        return { ms: 0, answer: JSON.stringify({ event: "websocket:notify", payload }) };
      },
    };
  },
};

const LINES: Record<CarrierName, CarrierLine> = { twilio, telnyx, plivo, vonage };

interface CarrierCall {
  readonly idx: number;
  readonly ws: WebSocket;
  readonly stream: CarrierStream;
  readonly provider: ClockConnection;
}

export interface CarrierLoadOptions {
  carrier: CarrierName;
  /** The target's base URL, http://127.0.0.1:PORT. */
  baseUrl: string;
  /** Port the stand-in realtime provider listens on (the target is configured to reach it there). */
  providerPort: number;
}

export class CarrierLoad {
  /** frame in -> provider, ms. */
  readonly inbound = new LatencyLog();
  /** provider -> frame out, ms. */
  readonly outbound = new LatencyLog();
  readonly provider = new AudioClockProvider(this.inbound, this.outbound);
  readonly calls: CarrierCall[] = [];
  readonly #o: CarrierLoadOptions;
  readonly #line: CarrierLine;
  #slots: CarrierCall[][] = Array.from({ length: SLOTS }, () => []);
  #timer: NodeJS.Timeout | undefined;
  #sending = { carrier: false, provider: false };
  #closedCalls = 0;

  constructor(options: CarrierLoadOptions) {
    this.#o = options;
    this.#line = LINES[options.carrier];
  }

  get closedCalls(): number {
    return this.#closedCalls;
  }

  async start(): Promise<void> {
    await this.provider.listen(this.#o.providerPort);
    const t0 = performance.now();
    let done = 0;
    const tick = (): void => {
      const due = Math.floor((performance.now() - t0) / 2);
      // Late by more than a frame period: skip ahead rather than burst (the lag shows in the latencies).
      if (due - done > SLOTS) done = due - SLOTS;
      for (; done < due; done++) this.#sendSlot(this.#slots[done % SLOTS]!);
      this.#timer = setTimeout(tick, 1);
    };
    tick();
  }

  /**
   * Places `n` more calls one after the other (each call's provider socket is the next one to open, which is how
   * the two are paired without stamps), then starts an answer on each.
   */
  async addCalls(n: number): Promise<void> {
    for (let i = 0; i < n; i++) await this.#dial(this.calls.length);
    for (const c of this.calls) this.provider.startResponse(c.provider);
  }

  /** Audio both ways at 50 frames/s per call. */
  flow(carrier: boolean, provider: boolean): void {
    this.#sending = { carrier, provider };
  }

  async close(): Promise<void> {
    clearTimeout(this.#timer);
    for (const c of this.calls) c.ws.terminate();
    await this.provider.close();
  }

  #sendSlot(slot: CarrierCall[]): void {
    const { carrier, provider } = this.#sending;
    for (const c of slot) {
      if (carrier && c.ws.readyState === WebSocket.OPEN) {
        const now = performance.now();
        this.inbound.countSent(now);
        c.provider.inbound!.sent(now);
        c.ws.send(c.stream.frame());
      }
      if (provider) this.provider.sendDelta(c.provider);
    }
  }

  async #dial(idx: number): Promise<void> {
    const { url, init, callId } = this.#line.webhook(this.#o.baseUrl);
    const res = await fetch(url, init);
    const answer = await res.text();
    if (res.status !== 200) throw new Error(`answer webhook answered ${res.status}: ${answer.slice(0, 200)}`);
    const stream = this.#line.stream(answer, callId);
    const ws = new WebSocket(stream.url, { perMessageDeflate: false });
    await new Promise<void>((resolve, reject) => {
      ws.once("open", resolve);
      ws.once("error", reject);
    });
    ws.on("error", () => {});
    ws.on("close", () => this.#closedCalls++);
    const inbound = new AudioClock();
    const outbound = new AudioClock();
    ws.on("message", (data: Buffer, isBinary) => {
      const { ms, answer: ack } = stream.reply(data, isBinary);
      if (ms > 0) outbound.received(ms, this.outbound);
      if (ack && ws.readyState === WebSocket.OPEN) ws.send(ack);
    });
    for (const m of stream.hello) ws.send(m);
    const provider = await this.provider.configured(idx);
    provider.inbound = inbound;
    provider.outbound = outbound;
    const call: CarrierCall = { idx, ws, stream, provider };
    this.calls.push(call);
    this.#slots[idx % SLOTS]!.push(call);
  }
}
